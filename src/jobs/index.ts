import { domainContext } from "../domain/context";
import {
  completeProvisioning,
  expireBatches,
  releaseAfterGrace,
  warnExpiringBatches,
} from "../domain/isp/batch-lifecycle";
import { renewDueSubscriptions } from "../domain/subscriptions/renewals";
import { pruneUsageDedupe } from "../domain/traffic/retention";
import { logError, logInfo } from "../platform/logger";

/**
 * The Cron Trigger's work, every minute: each step is a domain verb that is idempotent, so a repeated or
 * overlapping run finds nothing left to do and no period is charged twice.
 */
export async function runScheduledJobs(env: Cloudflare.Env, scheduledTime: number): Promise<void> {
  const ctx = domainContext(env);
  const steps = [
    ["complete_provisioning", () => completeProvisioning(ctx, scheduledTime)],
    ["renew_subscriptions", () => renewDueSubscriptions(ctx, scheduledTime)],
    ["expire_batches", () => expireBatches(ctx, scheduledTime)],
    ["release_after_grace", () => releaseAfterGrace(ctx, scheduledTime)],
    ["warn_expiring_batches", () => warnExpiringBatches(ctx, scheduledTime)],
    ["prune_usage_dedupe", () => pruneUsageDedupe(ctx, scheduledTime)],
  ] as const;
  for (const [name, step] of steps) {
    try {
      const handled = await step();
      if (handled > 0) logInfo("job", { job: name, handled });
    } catch (error) {
      // One failing step must not stop the others; the next run retries it.
      logError("job_failed", { job: name }, error);
    }
  }
}
