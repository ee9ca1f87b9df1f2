import { eq, sql } from "drizzle-orm";
import { type Product, usageBatches } from "../../db/schema";
import { DAY, MINUTE, now } from "../../platform/clock";
import type { DomainContext } from "../context";
import { type GatewayTarget, parseUsername } from "../gateway/username";
import { accountShare, type OwnedRecord } from "./aggregate";
import { enqueueMessages, packBatch } from "./message-packing";
import { subuserOwners } from "./owners";
import type { UsageBatch, UsageRecord } from "./usage-records";

export interface IngestResult {
  accepted: number;
  dropped: number;
  duplicate: boolean;
}

/**
 * Takes a usage batch from the gateway: records of unknown sub-users or of a product their sub-user lacks are
 * dropped and counted; the rest leave the request through the `usage` queue, grouped by account, in messages that
 * depend on the batch alone. The batch's row is taken before its messages are enqueued and marked sent after: a
 * batch sent before is answered `duplicate: true` with the first answer's counts and enqueues nothing; a copy
 * racing the first post, or a retry of one that failed between enqueueing and marking, sends the same messages
 * stamped with the first post's time, and every store applies a part once (it looks for the part's key among the
 * parts it applied since then). A deleted sub-user's records are judged by its account's store (they count
 * during the drain).
 */
export async function ingestUsageBatch(ctx: DomainContext, batch: UsageBatch): Promise<IngestResult> {
  const ownerOf = ownerKeys(ctx);
  const ownerKeyOf = (record: UsageRecord) => ownerOf(record).key;
  const names = subuserNames(batch.records.map(ownerKeyOf));
  // One round trip at most: the batch's row (taken, or the one a post before took), and the owners of names never
  // seen before.
  const { owners, alongside: taken } = await subuserOwners(ctx, names, takeBatch(ctx, batch.batch_id));
  const first = taken[0];
  if (!first) throw new Error(`Usage batch ${batch.batch_id} was not recorded.`);
  if (first.sent) return { accepted: first.accepted, dropped: first.dropped, duplicate: true };
  const owned = batch.records.flatMap((record) => {
    const [product, name] = splitOwnerKey(ownerKeyOf(record));
    const owner = owners.get(name);
    return owner?.products.includes(product as Product) ? [{ accountId: owner.accountId, record, owner }] : [];
  });
  const dropped = batch.records.length - owned.length;
  const shares = [...Map.groupBy(owned, (entry) => entry.accountId)].map(([accountId, entries]) =>
    accountShare(
      accountId,
      entries.map(
        ({ record, owner }): OwnedRecord => ({
          record,
          owner,
          ts: countedAt(Date.parse(record.ts), first.receivedAt),
          target: ownerOf(record).target,
        }),
      ),
    ),
  );
  await enqueueMessages(ctx.env.USAGE_QUEUE, packBatch(batch.batch_id, shares, first.receivedAt));
  return markSent(ctx, batch.batch_id, batch.records.length - dropped, dropped);
}

/** How far before its batch's arrival a record may be counted: the daily traffic the stores keep (401 days). */
export const USAGE_KEPT_BACK_MS = 400 * DAY;
/** How far after its batch's arrival a record may be counted: a gateway's clock running a little ahead. */
export const USAGE_CLOCK_SKEW_MS = 5 * MINUTE;

/**
 * The time a record is counted at: its own, within the 400 days before its batch first arrived and 5 minutes
 * after. A record stamped outside (a gateway's clock gone wrong: the contract takes years 0000 to 9999) is still
 * billed, at the nearest end of that span, and every figure and date of it stays one the API can show.
 */
export function countedAt(ts: number, receivedAt: number): number {
  if (Number.isNaN(ts)) return receivedAt;
  return Math.min(receivedAt + USAGE_CLOCK_SKEW_MS, Math.max(receivedAt - USAGE_KEPT_BACK_MS, ts));
}

/** The batch's row: a new one, unsent, stamped now; or the row a post of the same batch took before, as it is. */
function takeBatch(ctx: DomainContext, id: string) {
  return ctx.db
    .insert(usageBatches)
    .values({ id, accepted: 0, dropped: 0, receivedAt: now(), copies: 0, sent: false })
    .onConflictDoUpdate({ target: usageBatches.id, set: { copies: sql`${usageBatches.copies}` } })
    .returning({
      accepted: usageBatches.accepted,
      dropped: usageBatches.dropped,
      receivedAt: usageBatches.receivedAt,
      sent: usageBatches.sent,
    });
}

/**
 * Marks the batch sent once its messages are enqueued: the first post to finish stores its counts; a copy that
 * raced it counts itself and reads the first post's counts back.
 */
async function markSent(ctx: DomainContext, id: string, accepted: number, dropped: number): Promise<IngestResult> {
  const [row] = await ctx.db
    .update(usageBatches)
    .set({
      accepted: sql`CASE WHEN ${usageBatches.sent} THEN ${usageBatches.accepted} ELSE ${accepted} END`,
      dropped: sql`CASE WHEN ${usageBatches.sent} THEN ${usageBatches.dropped} ELSE ${dropped} END`,
      copies: sql`${usageBatches.copies} + 1`,
      sent: true,
    })
    .where(eq(usageBatches.id, id))
    .returning({ accepted: usageBatches.accepted, dropped: usageBatches.dropped, copies: usageBatches.copies });
  if (!row) throw new Error(`Usage batch ${id} was not recorded.`);
  return { accepted: row.accepted, dropped: row.dropped, duplicate: row.copies > 1 };
}

/**
 * The owner key of each record and, for gateway products, its username's target, worked out once per username of
 * the batch (a batch repeats few of them).
 */
function ownerKeys(ctx: DomainContext): (record: UsageRecord) => RecordOwner {
  const owners = new Map<string, RecordOwner>();
  return (record) => {
    const username = `${record.product}|${record.username}`;
    let owner = owners.get(username);
    if (owner === undefined) {
      owner = recordOwner(ctx, record);
      owners.set(username, owner);
    }
    return owner;
  };
}

interface RecordOwner {
  /** `product:name` of the sub-user the record belongs to ("" when none can own it). */
  key: string;
  target?: GatewayTarget;
}

/** The gateway name of a record's sub-user and the product it must have; for gateway products, the target. */
function recordOwner(ctx: DomainContext, record: UsageRecord): RecordOwner {
  const prefix = ctx.env.GATEWAY_USER_PREFIX;
  if (record.product === "isp") {
    const name = record.username.startsWith(`${prefix}_`) ? record.username.slice(prefix.length + 1) : "";
    return { key: `isp:${name}` };
  }
  const parsed = parseUsername(record.username, prefix);
  return parsed.ok && parsed.value.product === record.product
    ? { key: `${record.product}:${parsed.value.name}`, target: parsed.value.target }
    : { key: "" };
}

/** An owner key's product and gateway name (both empty for a record no sub-user can own). */
function splitOwnerKey(key: string): [string, string] {
  const colon = key.indexOf(":");
  return colon < 0 ? ["", ""] : [key.slice(0, colon), key.slice(colon + 1)];
}

/** The sub-user names of owner keys, once each. */
function subuserNames(keys: string[]): string[] {
  return [...new Set(keys.map((key) => splitOwnerKey(key)[1]).filter((name) => name !== ""))];
}
