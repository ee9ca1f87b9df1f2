import { sql } from "drizzle-orm";
import { addSessionUsage } from "../../../durable-objects/session-usage";
import { type Product, usageBatches } from "../../db/schema";
import { now } from "../../platform/clock";
import { uniformHash } from "../../platform/sampling";
import type { DomainContext } from "../context";
import { parseUsername } from "../gateway/username";
import { enqueueMessages, packBatch, type Share } from "./message-packing";
import { type SubuserOwner, subuserOwners } from "./owners";
import type { Cell, SampleCandidate, SessionUsage } from "./usage-messages";
import type { UsageBatch, UsageRecord } from "./usage-records";

/** Request-log candidates per account, minute and batch; the account's store thins them to a uniform sample. */
const SAMPLE_CANDIDATES = 100;
const MINUTE_MS = 60_000;
const RANK_SEED = 0x9747b28c;

export interface IngestResult {
  accepted: number;
  dropped: number;
  duplicate: boolean;
}

/**
 * Takes a usage batch from the gateway: records of unknown sub-users or of a product their sub-user lacks are
 * dropped and counted; the rest leave the request through the `usage` queue, grouped by account, in messages that
 * depend on the batch alone. The same `batch_id` posted again (a retry, even one racing the first post) sends the
 * same messages, which every store applies once, and is answered `duplicate: true` with the first answer's
 * counts. A deleted sub-user's records are judged by its account's store (they count during the drain).
 */
export async function ingestUsageBatch(ctx: DomainContext, batch: UsageBatch): Promise<IngestResult> {
  const ownerKeyOf = ownerKeys(ctx);
  const owners = await subuserOwners(ctx, subuserNames(batch.records.map(ownerKeyOf)));
  const byAccount = new Map<string, Entry[]>();
  let dropped = 0;
  for (const record of batch.records) {
    const [product, name] = splitOwnerKey(ownerKeyOf(record));
    const owner = owners.get(name);
    if (!owner?.products.includes(product as Product)) {
      dropped++;
      continue;
    }
    const list = byAccount.get(owner.accountId) ?? [];
    list.push({ record, owner, ts: Date.parse(record.ts) });
    byAccount.set(owner.accountId, list);
  }
  const shares = [...byAccount].map(([accountId, entries]) => accountShare(accountId, entries));
  await enqueueMessages(ctx, packBatch(batch.batch_id, shares));
  return recordBatch(ctx, batch.batch_id, batch.records.length - dropped, dropped);
}

/**
 * Records the batch (one write, no read first): the first post stores its counts, later ones count themselves
 * as copies and read the first post's counts back.
 */
async function recordBatch(ctx: DomainContext, id: string, accepted: number, dropped: number): Promise<IngestResult> {
  const [row] = await ctx.db
    .insert(usageBatches)
    .values({ id, accepted, dropped, receivedAt: now() })
    .onConflictDoUpdate({ target: usageBatches.id, set: { copies: sql`${usageBatches.copies} + 1` } })
    .returning({ accepted: usageBatches.accepted, dropped: usageBatches.dropped, copies: usageBatches.copies });
  if (!row) throw new Error(`Usage batch ${id} was not recorded.`);
  return { accepted: row.accepted, dropped: row.dropped, duplicate: row.copies > 1 };
}

/** A record, its owner and its time (ms). */
interface Entry {
  record: UsageRecord;
  owner: SubuserOwner;
  ts: number;
}

/** The owner key of each record, worked out once per username of the batch (a batch repeats few of them). */
function ownerKeys(ctx: DomainContext): (record: UsageRecord) => string {
  const keys = new Map<string, string>();
  return (record) => {
    const username = `${record.product}|${record.username}`;
    let key = keys.get(username);
    if (key === undefined) {
      key = recordOwnerKey(ctx, record);
      keys.set(username, key);
    }
    return key;
  };
}

/** The gateway name of a record's sub-user and the product it must have. */
function recordOwnerKey(ctx: DomainContext, record: UsageRecord): string {
  const prefix = ctx.env.GATEWAY_USER_PREFIX;
  if (record.product === "isp") {
    const name = record.username.startsWith(`${prefix}_`) ? record.username.slice(prefix.length + 1) : "";
    return `isp:${name}`;
  }
  const parsed = parseUsername(record.username, prefix);
  return parsed.ok && parsed.value.product === record.product ? `${record.product}:${parsed.value.name}` : "";
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

/** One account's share of a batch, aggregated: rollup cells, sticky-session usage per gate, log candidates. */
function accountShare(accountId: string, entries: Entry[]): Share {
  const cells = new Map<string, Cell>();
  const gates = new Map<string, Map<string, SessionUsage>>();
  for (const { record, owner, ts } of entries) {
    addToCell(cells, record, owner, ts);
    if (record.product !== "isp" && record.username.includes("-session-")) {
      const sessions = gates.get(owner.gateName) ?? new Map<string, SessionUsage>();
      addToSession(sessions, record, ts);
      gates.set(owner.gateName, sessions);
    }
  }
  return {
    accountId,
    cells: [...cells.values()],
    sessions: [...gates].flatMap(([gateName, sessions]) =>
      [...sessions.values()].map((usage) => ({ gateName, usage })),
    ),
    samples: sampleCandidates(entries),
  };
}

function addToCell(cells: Map<string, Cell>, record: UsageRecord, owner: SubuserOwner, ts: number): void {
  const minute = ts - (ts % MINUTE_MS);
  const region = record.exit_geo.split("/")[0] ?? "";
  const tag = record.tag ?? "";
  const carrier = record.carrier_name ?? "";
  const ip = record.product === "isp" ? (record.dest_ip ?? "") : "";
  const key = [minute, record.product, owner.subuserId, region, record.exit_asn, tag, carrier, ip].join("|");
  const cell = cells.get(key) ?? {
    minute,
    product: record.product,
    subuserId: owner.subuserId,
    region,
    asn: record.exit_asn,
    tag,
    carrier,
    ip,
    bytesIn: 0,
    bytesOut: 0,
    requests: 0,
    errors: 0,
  };
  cell.bytesIn += record.bytes_in;
  cell.bytesOut += record.bytes_out;
  cell.requests += 1;
  if (record.error_code !== null) cell.errors += 1;
  cells.set(key, cell);
}

function addToSession(sessions: Map<string, SessionUsage>, record: UsageRecord, ts: number): void {
  const bytes = record.bytes_in + record.bytes_out;
  const usage: SessionUsage = {
    username: record.username,
    product: record.product as Product,
    firstTs: ts,
    lastTs: ts,
    firstExitIp: record.exit_ip,
    repinnedExitIp: record.repinned ? record.exit_ip : null,
    bytes,
    requests: 1,
    lastRequests: [
      {
        requestId: record.request_id,
        ts,
        method: record.method,
        targetHost: record.target_host,
        status: record.status,
        bytes,
        exitIp: record.exit_ip,
      },
    ],
  };
  const session = sessions.get(record.username);
  if (session) addSessionUsage(session, usage);
  else sessions.set(record.username, usage);
}

/**
 * Per minute, at most 100 candidates, chosen uniformly by a hash of the request id; each stands for its share of
 * that minute's requests in the batch. They depend on the batch alone, never on what the account's store has
 * counted so far, so a retry of the batch sends exactly the same ones; the store keeps those its rate samples.
 */
function sampleCandidates(entries: Entry[]): SampleCandidate[] {
  const byMinute = Map.groupBy(entries, (entry) => entry.ts - (entry.ts % MINUTE_MS));
  return [...byMinute.values()].flatMap((minuteEntries) => {
    const chosen = minuteEntries.length <= SAMPLE_CANDIDATES ? minuteEntries : uniformChoice(minuteEntries);
    const weight = minuteEntries.length / chosen.length;
    return chosen.map(({ record, owner, ts }) => ({
      requestId: record.request_id,
      ts,
      product: record.product,
      subuserId: owner.subuserId,
      method: record.method,
      targetHost: record.target_host,
      status: record.status,
      bytes: record.bytes_in + record.bytes_out,
      exitIp: record.exit_ip,
      exitGeo: record.exit_geo,
      exitAsn: record.exit_asn,
      tag: record.tag,
      weight,
    }));
  });
}

/** 100 of a minute's entries, ranked by a hash independent of the one the store keeps candidates by. */
function uniformChoice(entries: Entry[]): Entry[] {
  return entries
    .map((entry) => ({ entry, rank: uniformHash(entry.record.request_id, RANK_SEED) }))
    .sort((a, b) => a.rank - b.rank)
    .slice(0, SAMPLE_CANDIDATES)
    .map(({ entry }) => entry);
}
