import { inArray } from "drizzle-orm";
import { TrafficStoreClient } from "../../../durable-objects";
import { runGuardedBatch, type Statement } from "../../db/guarded-batch";
import { usageApplied } from "../../db/schema";
import { now, utcMonth } from "../../platform/clock";
import { consumePoolsStatement } from "../billing/pools";
import type { DomainContext } from "../context";
import { poolThresholdEvents, subuserThresholdEvents } from "../events";
import { subuserGate } from "../subusers/gate-sync";
import { addMonthlyUsageStatements } from "../subusers/monthly-usage";
import { addMinuteRequestsStatements } from "./minute-requests";
import type { SessionUsage, UsageMessage } from "./usage-messages";

/**
 * Applies one account's usage messages of a consumer batch, each exactly once whatever the redeliveries: every
 * step remembers the message keys in the same atomic write as its effect — the sub-users' gates (sticky
 * sessions), the account's traffic store (rollups, request log, session index) and D1 (pools, monthly usage,
 * threshold events) — so messages that failed half-way are retried and only their missing effects happen. The
 * messages share each step's call: one per gate, one to the store and one D1 batch, however many there are.
 */
export async function applyUsageMessages(
  ctx: DomainContext,
  accountId: string,
  messages: UsageMessage[],
): Promise<void> {
  const sessions = await Promise.all(
    [...sessionUsageByGate(messages)].map(([gateName, parts]) => subuserGate(ctx, gateName).applySessionUsage(parts)),
  );
  await new TrafficStoreClient(ctx.env, accountId).ingest({
    parts: messages.map(({ key, cells, samples }) => ({ key, cells, samples })),
    sessions: sessions.flat(),
  });
  // A part without cells (sessions and samples only) has nothing for D1.
  await consume(
    ctx,
    accountId,
    messages.filter((message) => message.cells.length > 0),
  );
}

function sessionUsageByGate(messages: UsageMessage[]): Map<string, Array<{ key: string; usages: SessionUsage[] }>> {
  const byGate = new Map<string, Array<{ key: string; usages: SessionUsage[] }>>();
  for (const message of messages) {
    for (const gate of message.gates) {
      const parts = byGate.get(gate.gateName) ?? [];
      parts.push({ key: message.key, usages: gate.sessions });
      byGate.set(gate.gateName, parts);
    }
  }
  return byGate;
}

/**
 * Pools (gateway products) and sub-users' monthly usage consume the messages' bytes (in + out), once each; the
 * account's requests per minute are counted for the usage route's sampling.
 */
async function consume(ctx: DomainContext, accountId: string, messages: UsageMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const appliedBefore = await ctx.db
    .select({ key: usageApplied.messageKey })
    .from(usageApplied)
    .where(
      inArray(
        usageApplied.messageKey,
        messages.map((message) => message.key),
      ),
    );
  const seen = new Set(appliedBefore.map((row) => row.key));
  const fresh = messages.filter((message) => !seen.has(message.key));
  if (fresh.length === 0) return;

  const at = now();
  const cells = fresh.flatMap((message) => message.cells);
  const byProduct = new Map<string, number>();
  const byMonth = new Map<string, { subuserId: string; month: string; bytes: number }>();
  for (const cell of cells) {
    const bytes = cell.bytesIn + cell.bytesOut;
    if (cell.product !== "isp") byProduct.set(cell.product, (byProduct.get(cell.product) ?? 0) + bytes);
    const month = utcMonth(cell.minute);
    const key = `${cell.subuserId}|${month}`;
    const entry = byMonth.get(key) ?? { subuserId: cell.subuserId, month, bytes: 0 };
    entry.bytes += bytes;
    byMonth.set(key, entry);
  }
  const pools = [...byProduct].map(([product, bytes]) => ({ product, bytes }));
  const months = [...byMonth.values()];
  // A concurrent consumer applying the same message makes this insert fail: the batch rolls back and retries.
  const statements: Statement[] = [
    ctx.db.insert(usageApplied).values(fresh.map((message) => ({ messageKey: message.key, appliedAt: at }))),
    ...addMinuteRequestsStatements(ctx.db, accountId, cells, at),
  ];
  if (pools.length > 0) {
    statements.push(consumePoolsStatement(ctx.db, accountId, pools));
    statements.push(poolThresholdEvents(ctx.db, accountId, pools, at));
  }
  if (months.length > 0) {
    statements.push(...addMonthlyUsageStatements(ctx.db, months));
    statements.push(subuserThresholdEvents(ctx.db, months, at));
  }
  const outcome = await runGuardedBatch(ctx, statements);
  if (!outcome.committed) {
    throw new Error(`Usage messages ${fresh.map((m) => m.key).join(", ")} rolled back: ${outcome.failure}`);
  }
}
