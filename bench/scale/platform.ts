/**
 * The platform's published limits and list prices (docs/scale.md §2 names the sources), and the per-call figures
 * the simulations state rather than measure. One place for both simulations: metering (`simulate.ts`) and the
 * access path (`access-path.ts`).
 */

export const LIMITS = {
  queueMessagesPerSecond: 5_000,
  queueBytesPerSecond: 5_000 * 128_000,
  /** D1's one writer: ~1,000 queries/s at 1 ms each, i.e. one second of SQLite time per second. */
  d1WriterSecondsPerSecond: 1,
  d1Bytes: 10e9,
  objectRequestsPerSecond: 1_000,
  objectCpuSecondsPerSecond: 1,
  objectBytes: 10e9,
  /** A store's largest string, blob or row (SQLite-backed Durable Objects). */
  objectRowBytes: 2e6,
};

/** List prices in USD (Workers Paid; included amounts left out: they are noise at this scale). */
export const PRICES = {
  workerRequestsPerMillion: 0.3,
  workerCpuMsPerMillion: 0.02,
  queueOperationsPerMillion: 0.4,
  queueOperationBytes: 64 * 1024,
  objectRequestsPerMillion: 0.15,
  objectGbSecondsPerMillion: 12.5,
  objectMemoryGb: 0.128,
  objectRowsWrittenPerMillion: 1.0,
  objectRowsReadPerMillion: 0.001,
  objectStorageGbMonth: 0.2,
  d1RowsWrittenPerMillion: 1.0,
  d1RowsReadPerMillion: 0.001,
  d1StorageGbMonth: 0.75,
};

/**
 * Durable Object duration is billed on wall-clock while an object is active (running, or awaiting I/O it cannot
 * hibernate through; "Durable Objects pricing", Cloudflare docs). A call's wall-clock is its measured CPU time plus
 * this much I/O, stated: the storage commit its output gate waits for and the RPC's own turn. An idle object that
 * could hibernate is not billed, so time between calls is free.
 */
export const OBJECT_CALL_IO_MS = 5;

/** GB-seconds of duration for `calls` object calls taking `cpuMs` of CPU between them. */
export function objectGbSeconds(calls: number, cpuMs: number): number {
  return ((calls * OBJECT_CALL_IO_MS + cpuMs) / 1000) * PRICES.objectMemoryGb;
}

/** Queue operations for a message of `bytes`: a write, a read and a delete per 64 KB. */
export function queueOperations(bytes: number): number {
  return 3 * Math.ceil(bytes / PRICES.queueOperationBytes);
}
