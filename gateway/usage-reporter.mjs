// Usage records leave in batches: every `flushMs`, or at once when `maxRecords` wait. One batch is in flight at a
// time; a failed send is retried with the same `batch_id` (the API counts a batch once), backing off to 30 s.
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";

const MAX_BACKOFF_MS = 30_000;

export function usageReporter(api, { flushMs = 1000, maxRecords = 500, log = console } = {}) {
  const runId = randomBytes(6).toString("hex");
  let sequence = 0;
  let waiting = [];
  let inFlight = null;
  let failures = 0;
  let timer = null;

  async function send(batch) {
    const gzipped = gzipSync(JSON.stringify(batch));
    for (;;) {
      try {
        await api.reportUsage(gzipped);
        failures = 0;
        return;
      } catch (error) {
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

  function flush() {
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

  function schedule(ms) {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      flush();
    }, ms);
    timer.unref?.();
  }

  return {
    add(record) {
      waiting.push(record);
      schedule(waiting.length >= maxRecords ? 0 : flushMs);
    },
    /** Sends everything still waiting; resolves when the API has it. */
    async drain() {
      while (waiting.length > 0 || inFlight) await flush();
    },
  };
}
