import type { DomainContext } from "../context";
import { announceNewSources } from "../subusers/client-sources";
import { subuserGate } from "../subusers/gate-sync";
import { settleUsage } from "./settlement";
import { accountStore } from "./store";
import type { SessionUsage, UsagePart } from "./usage-messages";

/**
 * Applies one account's usage parts of a consumer batch (distinct keys), each exactly once whatever the
 * redeliveries: the sub-users' gates (sticky sessions) and the account's traffic store (rollups, request log,
 * session index, the usage meter) each remember the part keys in the same synchronous step as their effect, so
 * parts that failed half-way are retried and only their missing effects happen. The parts share each step's
 * call: one per gate and one to the store, however many there are. A settlement the store says is due goes to
 * D1 before this returns.
 */
export async function applyUsageParts(ctx: DomainContext, accountId: string, parts: UsagePart[]): Promise<void> {
  const sessions = await Promise.all(
    [...sessionUsageByGate(parts)].map(([gateName, usages]) => subuserGate(ctx, gateName).applySessionUsage(usages)),
  );
  const store = accountStore(ctx, accountId);
  const { settlement, sourceAlerts } = await store.ingest({
    accountId,
    parts: parts.map(({ key, cells, domains, sources, samples }) => ({ key, cells, domains, sources, samples })),
    sessions: sessions.flat(),
  });
  await settleUsage(ctx, accountId, settlement);
  await announceNewSources(ctx, accountId, sourceAlerts, store);
}

/** Settles what the account's store metered and has not settled (a `settle` message from its alarm). */
export async function settleAccountUsage(ctx: DomainContext, accountId: string): Promise<void> {
  await settleUsage(ctx, accountId, await accountStore(ctx, accountId).settlement());
}

function sessionUsageByGate(parts: UsagePart[]): Map<string, Array<{ key: string; usages: SessionUsage[] }>> {
  const gates = parts.flatMap((part) => part.gates.map((gate) => ({ part, gate })));
  return new Map(
    [...Map.groupBy(gates, ({ gate }) => gate.gateName)].map(([gateName, entries]) => [
      gateName,
      entries.map(({ part, gate }) => ({ key: part.key, usages: gate.sessions })),
    ]),
  );
}
