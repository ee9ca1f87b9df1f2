import type { Settlement } from "../../durable-objects/traffic-store/contract";
import { InjectedFault, takeFault } from "../../platform/faults";
import type { DomainContext } from "../context";
import { announceNewSources } from "../subusers/client-sources";
import { subuserGate } from "../subusers/gate-sync";
import { announceTrafficSpikes } from "../subusers/traffic-spikes";
import { settleUsage } from "./settlement";
import { accountStore } from "./store";
import type { SessionDelta, UsagePart } from "./usage-messages";

/**
 * Applies one account's usage parts of a consumer batch (distinct keys), each exactly once whatever the
 * redeliveries: the account's traffic store (usage, request log, sources, sessions, the meter) remembers the part
 * keys in the same synchronous step as their effect, so parts that failed half-way are retried and only what was
 * not applied happens. The parts share one store call however many there are. Sticky usage of records that did not
 * name their session is first matched to its sessions by their gates (a call per gate: records that name their
 * session need none). A settlement the store says is due goes to D1 before this returns. `shard`: which of a
 * sharded account's stores the parts go to (their sub-users').
 */
export async function applyUsageParts(
  ctx: DomainContext,
  accountId: string,
  parts: UsagePart[],
  shard = 0,
): Promise<void> {
  const resolved = await resolveGateSessions(ctx, parts);
  const store = accountStore(ctx, accountId, shard);
  const { settlement, sourceAlerts, spikeAlerts } = await store.ingest({
    accountId,
    ...(shard === 0 ? {} : { shard }),
    parts: parts.map(({ key, receivedAt, cells, domains, sources, samples, sessions }) => ({
      key,
      ...(receivedAt === undefined ? {} : { receivedAt }),
      cells,
      domains,
      sources,
      samples,
      sessions: [...sessions, ...(resolved.get(key) ?? [])],
    })),
  });
  if (takeFault("redelivery")) throw new InjectedFault("redelivery");
  await settle(ctx, accountId, shard, settlement);
  await announceNewSources(ctx, accountId, sourceAlerts, store);
  await announceTrafficSpikes(ctx, accountId, spikeAlerts, store);
}

/**
 * Settles what one of the account's stores metered and has not settled, and records the spike alerts no ingest took
 * (a `settle` message from its alarm).
 */
export async function settleAccountUsage(ctx: DomainContext, accountId: string, shard: number): Promise<void> {
  const store = accountStore(ctx, accountId, shard);
  await settle(ctx, accountId, shard, await store.settlement());
  await announceTrafficSpikes(ctx, accountId, await store.spikeAlerts(), store);
}

/** Hands a settlement due to D1, on either path (where a soak's `d1-write` fault fails it once, before the write). */
async function settle(ctx: DomainContext, accountId: string, shard: number, settlement: Settlement | null) {
  if (settlement && takeFault("d1-write")) throw new InjectedFault("d1-write");
  await settleUsage(ctx, accountId, shard, settlement);
}

/**
 * Sticky usage that names no session, matched by each gate to its sessions (one call per gate for all parts):
 * per part key, the sessions' usage with who they are. Usage no session matches counts in traffic only.
 */
async function resolveGateSessions(ctx: DomainContext, parts: UsagePart[]): Promise<Map<string, SessionDelta[]>> {
  const byGate = Map.groupBy(
    parts.flatMap((part) => part.gates.flatMap((gate) => gate.sessions.map((usage) => ({ part, gate, usage })))),
    (entry) => entry.gate.gateName,
  );
  const resolved = new Map<string, SessionDelta[]>();
  await Promise.all(
    [...byGate].map(async ([gateName, entries]) => {
      const identities = await subuserGate(ctx, gateName).resolveSessions(entries.map((entry) => entry.usage));
      entries.forEach(({ part, usage }, index) => {
        const identity = identities[index];
        if (!identity) return;
        resolved.set(part.key, [...(resolved.get(part.key) ?? []), { ...identity, usage }]);
      });
    }),
  );
  return resolved;
}
