import type { Product } from "../../db/schema";
import { subuserShard } from "../../durable-objects/traffic-store";
import { USAGE_CLOCK_SKEW_MS } from "../../durable-objects/traffic-store/contract";
import { ledgerShards, UsageBatchLedgerClient } from "../../durable-objects/usage-batch-ledger";
import { DAY, now } from "../../platform/clock";
import { logInfo } from "../../platform/logger";
import type { DomainContext } from "../context";
import { type GatewayTarget, parseUsername } from "../gateway/username";
import { accountShare, type OwnedRecord } from "./aggregate";
import { deliverToTails } from "./live-tail";
import { enqueueMessages, packBatch } from "./message-packing";
import { claimKey, type OwnerClaim, type RoutedOwner, signedOwners, subuserOwners } from "./owners";
import type { UsageBatch, UsageRecord } from "./usage-records";
import { shardOf } from "./usage-shards";

export interface IngestResult {
  accepted: number;
  dropped: number;
  duplicate: boolean;
}

/**
 * Takes a usage batch from the gateway: records of unknown sub-users or of a product their sub-user lacks are
 * dropped and counted. A record that carries its owner (`subuser`, `account`, `owner_tag`: a node decided it from
 * its snapshot) is owned as it says when the tag verifies for its username's gateway name, with no D1 read of the
 * sub-user; one whose tag does not verify is dropped and counted (and logged, without the tag). The rest leave the
 * request through the `usage` queue, grouped by account, in messages that depend on the batch alone. The batch's
 * ledger shard remembers each batch's first post for 7 days: a batch it recalls is answered `duplicate: true` with
 * the first post's counts and enqueues nothing; else the messages are enqueued, stamped now, and the post recorded
 * after (one row). A copy racing the first post, or a retry of one that failed before recording, sends the same
 * parts again with its own later time: every store applies a part once, as it looks for the part's key from that
 * time or the part's oldest usage less the clock skew, whichever is earlier. A deleted sub-user's records are judged
 * by its account's store (they count during the drain). A sharded account's records are grouped per store shard, by
 * sub-user (`store-shards.ts`). Accounts with a live tail open get the batch's sampled records as soon as it is
 * enqueued (`live-tail.ts`).
 */
export async function ingestUsageBatch(ctx: DomainContext, batch: UsageBatch): Promise<IngestResult> {
  const ledger = new UsageBatchLedgerClient(ctx.env, shardOf(batch.batch_id, ledgerShards(ctx.env)));
  const ownerOf = ownerKeys(ctx);
  const ownerKeyOf = (record: UsageRecord) => ownerOf(record).key;
  const claimOf = (record: UsageRecord) => ownerClaim(record, splitOwnerKey(ownerKeyOf(record))[1]);
  const claims: OwnerClaim[] = [];
  const unsigned: UsageRecord[] = [];
  for (const record of batch.records) {
    const claim = claimOf(record);
    if (claim) claims.push(claim);
    else if (!hasOwnerFields(record)) unsigned.push(record);
  }
  const names = subuserNames(unsigned.map(ownerKeyOf));
  // One round trip before the work: the batch's first post, if any, beside the owners of names never seen before
  // (none for records that carry their owner signed: only their accounts' shard counts, cached a minute).
  const [first, owners, signed] = await Promise.all([
    ledger.recall(batch.batch_id),
    subuserOwners(ctx, names),
    signedOwners(ctx, claims),
  ]);
  if (first) return { accepted: first.accepted, dropped: first.dropped, duplicate: true };
  const receivedAt = now();
  const refused: UsageRecord[] = [];
  const owned = batch.records.flatMap((record) => {
    const [product, name] = splitOwnerKey(ownerKeyOf(record));
    let owner: RoutedOwner | null;
    if (hasOwnerFields(record)) {
      const claim = claimOf(record);
      owner = (claim && signed.get(claimKey(claim))) ?? null;
      if (!owner) refused.push(record);
    } else {
      owner = owners.get(name) ?? null;
      if (!owner?.products.includes(product as Product)) owner = null;
    }
    if (!owner) return [];
    const entry: OwnedRecord = {
      record,
      owner,
      ts: countedAt(Date.parse(record.ts), receivedAt),
      target: ownerOf(record).target,
    };
    return [{ accountId: owner.accountId, shard: subuserShard(owner.subuserId, owner.trafficShards), entry }];
  });
  const [firstRefused] = refused;
  if (firstRefused) {
    // Ids only: never the tag.
    logInfo("usage_owner_tag_refused", {
      batch_id: batch.batch_id,
      records: refused.length,
      subuser: firstRefused.subuser,
      account: firstRefused.account,
    });
  }
  const dropped = batch.records.length - owned.length;
  const byStore = Map.groupBy(owned, (entry) => `${entry.accountId}/${entry.shard}`);
  const shares = [...byStore.values()].map((entries) => {
    const { accountId, shard } = entries[0] as (typeof owned)[number];
    return accountShare(
      accountId,
      entries.map(({ entry }) => entry),
      shard,
    );
  });
  await enqueueMessages(ctx.env.USAGE_QUEUE, packBatch(batch.batch_id, shares, receivedAt));
  // Live tails see the records now, not after the queues' minute-long windows; the post does not wait for them.
  const tails = deliverToTails(ctx, owned);
  if (ctx.waitUntil) ctx.waitUntil(tails);
  else await tails;
  const stored = await ledger.record(batch.batch_id, { accepted: owned.length, dropped, receivedAt });
  return { accepted: stored.first.accepted, dropped: stored.first.dropped, duplicate: !stored.recorded };
}

/** How far before its batch's arrival a record may be counted: the daily traffic the stores keep (401 days). */
export const USAGE_KEPT_BACK_MS = 400 * DAY;

/**
 * The time a record is counted at: its own, within the 400 days before its batch arrived and 5 minutes after. A
 * record stamped outside (a gateway's clock gone wrong: the contract takes years 0000 to 9999) is still billed, at
 * the nearest end of that span, and every figure and date of it stays one the API can show.
 */
export function countedAt(ts: number, receivedAt: number): number {
  if (Number.isNaN(ts)) return receivedAt;
  return Math.min(receivedAt + USAGE_CLOCK_SKEW_MS, Math.max(receivedAt - USAGE_KEPT_BACK_MS, ts));
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

/** Whether a record carries its owner (`subuser`, `account` and `owner_tag`, all three). */
function hasOwnerFields(record: UsageRecord): boolean {
  return record.subuser !== undefined && record.account !== undefined && record.owner_tag !== undefined;
}

/**
 * The owner a record claims for its username's gateway name, when it carries all three owner fields and its
 * username names a sub-user (null otherwise: a record with the fields and no name is dropped).
 */
function ownerClaim(record: UsageRecord, name: string): OwnerClaim | null {
  if (!hasOwnerFields(record) || name === "") return null;
  return {
    name,
    subuserId: record.subuser as string,
    accountId: record.account as string,
    tag: record.owner_tag as string,
  };
}
