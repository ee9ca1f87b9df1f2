import { domainContext } from "../domain/context";
import { abandonRun, executeRun, releaseRun } from "../domain/reports/execute";
import type { RunMessage } from "../domain/reports/runs";
import { logError } from "../platform/logger";

/** Attempts of a run before it is failed for good (the queue's `max_retries` allows one more). */
export const RUN_ATTEMPTS = 3;

/**
 * The `report-runs` queue: one message per run. An attempt that throws (the file could not be produced) is retried
 * with a growing delay; the last one fails the run. Destination failures do not throw: they fail the run at once
 * and keep its file.
 */
export async function consumeReportRuns(batch: MessageBatch<RunMessage>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  for (const message of batch.messages) {
    try {
      await executeRun(ctx, message.body.runId);
      message.ack();
    } catch (error) {
      if (message.attempts >= RUN_ATTEMPTS) {
        await abandonRun(ctx, message.body.runId, error);
        message.ack();
      } else {
        logError("report_run_attempt_failed", { run_id: message.body.runId, attempt: message.attempts }, error);
        await releaseRun(ctx, message.body.runId);
        message.retry({ delaySeconds: 30 * message.attempts });
      }
    }
  }
}
