import { eq, sql } from "drizzle-orm";
import { keepsSample, samplingRate } from "../../../durable-objects/request-log";
import { addSessionUsage } from "../../../durable-objects/session-usage";
import { type Product, subusers, usageBatches } from "../../db/schema";
import { now } from "../../platform/clock";
import { uniformHash } from "../../platform/sampling";
import type { DomainContext } from "../context";
import { parseUsername } from "../gateway/username";
import { enqueueMessages, type PackedMessage, packShare } from "./message-packing";
import { minuteRequestsByAccount, minuteRequestsQuery } from "./minute-requests";
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

interface Owner {
  subuserId: string;
  accountId: string;
  gateName: string;
}

/**
 * Takes a usage batch from the gateway: records of unknown, deleted or foreign-product sub-users are dropped and
 * counted; the rest leave the request through the `usage` queue, grouped by account. The same `batch_id` again
 * is answered `duplicate: true` with the first answer's counts and enqueues nothing.
 */
export async function ingestUsageBatch(ctx: DomainContext, batch: UsageBatch): Promise<IngestResult> {
  const ownerKeyOf = ownerKeys(ctx);
  const names = subuserNames(batch.records.map(ownerKeyOf));
  const times = batch.records.map((record) => Date.parse(record.ts));
  // One round trip: whether the batch was seen, the owners of its records and their accounts' recent rates.
  const [seenRows, ownerRows, rateRows] = await ctx.db.batch([
    ctx.db.select().from(usageBatches).where(eq(usageBatches.id, batch.batch_id)).limit(1),
    ownersQuery(ctx, names),
    minuteRequestsQuery(ctx.db, names, times),
  ]);
  const seen = seenRows[0];
  if (seen) return { accepted: seen.accepted, dropped: seen.dropped, duplicate: true };

  const owners = ownersByKey(ownerRows);
  const byAccount = new Map<string, Entry[]>();
  let dropped = 0;
  batch.records.forEach((record, i) => {
    const owner = owners.get(ownerKeyOf(record));
    if (!owner) {
      dropped++;
      return;
    }
    const list = byAccount.get(owner.accountId) ?? [];
    list.push({ record, owner, ts: times[i] as number });
    byAccount.set(owner.accountId, list);
  });
  const requestsInMinute = minuteRequestsByAccount(rateRows);
  const messages: PackedMessage[] = [];
  for (const [accountId, entries] of [...byAccount].sort(([a], [b]) => (a < b ? -1 : 1))) {
    messages.push(...accountMessages(batch.batch_id, accountId, entries, requestsInMinute(accountId)));
  }
  await enqueueMessages(ctx, messages);

  const accepted = batch.records.length - dropped;
  const recorded = await ctx.db
    .insert(usageBatches)
    .values({ id: batch.batch_id, accepted, dropped, receivedAt: now() })
    .onConflictDoNothing()
    .returning({ id: usageBatches.id });
  // A concurrent retry recorded it first: its messages were enqueued twice and the stores apply them once.
  return { accepted, dropped, duplicate: recorded.length === 0 };
}

/** A record, its owner and its time (ms). */
interface Entry {
  record: UsageRecord;
  owner: Owner;
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

/** The sub-user names of owner keys, once each. */
function subuserNames(keys: string[]): string[] {
  return [...new Set(keys.map((key) => key.split(":")[1]).filter((name): name is string => Boolean(name)))];
}

/** The live sub-users named (deleted ones are gone). */
function ownersQuery(ctx: DomainContext, names: string[]) {
  return ctx.db
    .select({
      id: subusers.id,
      name: subusers.name,
      accountId: subusers.accountId,
      products: subusers.products,
    })
    .from(subusers)
    .where(
      sql`${subusers.name} IN (SELECT value FROM json_each(${JSON.stringify(names)})) AND ${subusers.deletedAt} IS NULL`,
    );
}

/** Owners by `product:name`, for every product each sub-user has. */
function ownersByKey(
  rows: Array<{ id: string; name: string; accountId: string; products: Product[] }>,
): Map<string, Owner> {
  const owners = new Map<string, Owner>();
  for (const row of rows) {
    for (const product of row.products) {
      owners.set(`${product}:${row.name}`, {
        subuserId: row.id,
        accountId: row.accountId,
        gateName: row.name,
      });
    }
  }
  return owners;
}

/**
 * One account's share of a batch: aggregated, then packed into messages (JSON) with deterministic keys.
 * `requestsInMinute` is the account's rate as D1 last knew it (minute-requests.ts).
 */
function accountMessages(
  batchId: string,
  accountId: string,
  entries: Entry[],
  requestsInMinute: (minute: number) => number,
): PackedMessage[] {
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
  return packShare(
    { batchId, accountId },
    {
      cells: [...cells.values()],
      sessions: [...gates].flatMap(([gateName, sessions]) =>
        [...sessions.values()].map((usage) => ({ gateName, usage })),
      ),
      samples: sampleCandidates(entries, requestsInMinute),
    },
  );
}

function addToCell(cells: Map<string, Cell>, record: UsageRecord, owner: Owner, ts: number): void {
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
 * Per minute, at most 100 candidates, chosen uniformly by a hash of the request id (so a retry chooses the same
 * ones); each stands for its share of that minute's requests in the batch. Of those, only the ones the account's
 * store may keep at the rate D1 knows (never above the store's) are sent.
 */
function sampleCandidates(entries: Entry[], requestsInMinute: (minute: number) => number): SampleCandidate[] {
  const byMinute = new Map<number, Entry[]>();
  for (const entry of entries) {
    const minute = entry.ts - (entry.ts % MINUTE_MS);
    const list = byMinute.get(minute) ?? [];
    list.push(entry);
    byMinute.set(minute, list);
  }
  return [...byMinute].flatMap(([minute, minuteEntries]) => {
    const chosen = minuteEntries.length <= SAMPLE_CANDIDATES ? minuteEntries : uniformChoice(minuteEntries);
    const weight = minuteEntries.length / chosen.length;
    const rate = samplingRate(minute, requestsInMinute);
    const kept = chosen.filter(({ record }) => keepsSample({ requestId: record.request_id, weight }, rate));
    return kept.map(({ record, owner, ts }) => ({
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
