import { logInfo } from "./logger";

/**
 * Faults a soak run injects into a local worker (`npm run soak`), armed by `POST /internal/dev/faults`: a route that
 * exists only where the worker's var `FAULTS` is `"on"` (never in production). Module memory: a local worker runs its
 * fetch handler, queue consumers and Durable Objects in one isolate. Each hook takes one armed fault where it fires.
 *
 * - `store-abort`: an account's traffic store resets itself right after an ingest (the call fails; the queue retries).
 * - `redelivery`: the usage consumer fails after the store applied a message's parts, so the parts come again.
 * - `d1-write`: a usage settlement fails before its D1 write, so it is handed out again.
 */
export const faultKinds = ["store-abort", "redelivery", "d1-write"] as const;
export type FaultKind = (typeof faultKinds)[number];

const armed = new Map<FaultKind, number>();
const fired = new Map<FaultKind, number>();

/** Arms `count` more faults of `kind`. */
export function armFault(kind: FaultKind, count: number): void {
  armed.set(kind, (armed.get(kind) ?? 0) + count);
}

/** Whether a fault of `kind` fires here: takes one armed fault, if any. */
export function takeFault(kind: FaultKind): boolean {
  const left = armed.get(kind) ?? 0;
  if (left === 0) return false;
  armed.set(kind, left - 1);
  fired.set(kind, (fired.get(kind) ?? 0) + 1);
  logInfo("fault_injected", { kind });
  return true;
}

/** Per kind: faults still armed, and faults fired since the isolate started. */
export function faultCounts(): Record<FaultKind, { armed: number; fired: number }> {
  return Object.fromEntries(
    faultKinds.map((kind) => [kind, { armed: armed.get(kind) ?? 0, fired: fired.get(kind) ?? 0 }]),
  ) as Record<FaultKind, { armed: number; fired: number }>;
}

/** What a hook throws: the failure the fault stands for. */
export class InjectedFault extends Error {
  constructor(kind: FaultKind) {
    super(`injected fault: ${kind}`);
    this.name = "InjectedFault";
  }
}
