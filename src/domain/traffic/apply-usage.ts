import { TrafficStoreClient } from "../../../durable-objects";
import { runGuardedBatch, type Statement } from "../../db/guarded-batch";
import { usageApplied } from "../../db/schema";
import { now, utcMonth } from "../../platform/clock";
import { consumePoolsStatement } from "../billing/pools";
import type { DomainContext } from "../context";
import { poolThresholdEvents, subuserThresholdEvents } from "../events";
import { subuserGate } from "../subusers/gate-sync";
import { addMonthlyUsageStatements } from "../subusers/monthly-usage";
import type { UsageMessage } from "./usage-messages";

/**
 * Applies one usage message, exactly once whatever the redeliveries: each step remembers the message key in the
 * same atomic write as its effect — the sub-users' gates (sticky sessions), the account's traffic store (rollups,
 * request log, session index) and D1 (pools, monthly usage, threshold events) — so a message that failed
 * half-way is retried and only its missing effects happen.
 */
export async function applyUsageMessage(ctx: DomainContext, message: UsageMessage): Promise<void> {
  const sessions = await Promise.all(
    message.gates.map((gate) => subuserGate(ctx, gate.gateName).applySessionUsage(message.key, gate.sessions)),
  );
  await new TrafficStoreClient(ctx.env, message.accountId).ingest({
    key: message.key,
    cells: message.cells,
    samples: message.samples,
    sessions: sessions.flat(),
  });
  // A part without cells (sessions and samples only) has nothing for D1.
  if (message.cells.length > 0) await consume(ctx, message);
}

/** Pools (gateway products) and sub-users' monthly usage consume the message's bytes (in + out), once. */
async function consume(ctx: DomainContext, message: UsageMessage): Promise<void> {
  const at = now();
  const byProduct = new Map<string, number>();
  const byMonth = new Map<string, { subuserId: string; month: string; bytes: number }>();
  for (const cell of message.cells) {
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
  const statements: Statement[] = [ctx.db.insert(usageApplied).values({ messageKey: message.key, appliedAt: at })];
  if (pools.length > 0) {
    statements.push(consumePoolsStatement(ctx.db, message.accountId, pools));
    statements.push(poolThresholdEvents(ctx.db, message.accountId, pools, at));
  }
  if (months.length > 0) {
    statements.push(...addMonthlyUsageStatements(ctx.db, months));
    statements.push(subuserThresholdEvents(ctx.db, months, at));
  }
  const outcome = await runGuardedBatch(ctx, statements);
  if (!outcome.committed && outcome.failure !== "already_applied") {
    throw new Error(`Usage message ${message.key} rolled back: ${outcome.failure}`);
  }
}
