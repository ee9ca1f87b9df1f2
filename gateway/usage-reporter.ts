// Usage records leave in batches: every `flushMs`, or at once when `maxRecords` wait. One batch is in flight at a
// time; a failed send is retried with the same `batch_id` (the API counts a batch once), backing off to 30 s.
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { ApiClient } from "./api-client.ts";
import type { UsageBatch, UsageRecord } from "./wire.ts";

const MAX_BACKOFF_MS = 30_000;

export function usageReporter(
  api: Pick<ApiClient, "reportUsage">,
  {
    flushMs = 1000,
    maxRecords = 500,
    log = console,
  }: { flushMs?: number; maxRecords?: number; log?: Pick<Console, "error"> } = {},
) {
  const runId = randomBytes(6).toString("hex");
  let sequence = 0;
  let waiting: UsageRecord[] = [];
  let inFlight: Promise<void> | null = null;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;

  async function send(batch: UsageBatch): Promise<void> {
    const gzipped = gzipSync(JSON.stringify(batch));
    for (;;) {
      try {
        await api.reportUsage(gzipped);
        failures = 0;
        return;
      } catch (caught) {
        const error = caught as Error;
        if (/: 4\d\d /.test(error.message)) {
          log.error(`[gateway] usage batch ${batch.batch_id} rejected, dropped: ${error.message}`);
          return;
        }
        failures += 1;
        const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures);
        log.error(`[gateway] usage batch ${batch.batch_id} failed (${error.message}); retrying in ${delay} ms`);
        // Unreferenced: a node shutting down with the API gone does not stay up for its retries.
        await new Promise((resolve) => setTimeout(resolve, delay).unref?.());
      }
    }
  }

  function flush(): Promise<void> {
    if (inFlight || waiting.length === 0) return inFlight ?? Promise.resolve();
    const records = waiting.slice(0, maxRecords);
    waiting = waiting.slice(records.length);
    sequence += 1;
    inFlight = send({ batch_id: `gw-${runId}-${sequence}`, records }).finally(() => {
      inFlight = null;
      if (waiting.length > 0) schedule(0);
    });
    return inFlight;
  }

  function schedule(ms: number): void {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      flush();
    }, ms);
    timer.unref();
  }

  return {
    add(record: UsageRecord): void {
      waiting.push(record);
      schedule(waiting.length >= maxRecords ? 0 : flushMs);
    },
    /** Sends everything still waiting; resolves when the API has it. */
    async drain(): Promise<void> {
      while (waiting.length > 0 || inFlight) await flush();
    },
  };
}
