import { eq, sql } from "drizzle-orm";
import { addSessionUsage } from "../../../durable-objects/session-usage";
import { type Product, subusers, usageBatches } from "../../db/schema";
import { now } from "../../platform/clock";
import { uniformHash } from "../../platform/sampling";
import type { DomainContext } from "../context";
import { parseUsername } from "../gateway/username";
import type { Cell, GateUsage, SampleCandidate, SessionUsage, UsageMessage } from "./usage-messages";
import type { UsageBatch, UsageRecord } from "./usage-records";

/** A message stays well below the queue's 128 KB; a `sendBatch` below its 100 messages and 256 KB. */
const MESSAGE_BYTES = 100_000;
const SEND_BATCH_BYTES = 240_000;
const SEND_BATCH_MESSAGES = 100;
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
  // One round trip: whether the batch was seen, and the owners of its records.
  const [seenRows, ownerRows] = await ctx.db.batch([
    ctx.db.select().from(usageBatches).where(eq(usageBatches.id, batch.batch_id)).limit(1),
    ownersQuery(ctx, batch.records),
  ]);
  const seen = seenRows[0];
  if (seen) return { accepted: seen.accepted, dropped: seen.dropped, duplicate: true };

  const owners = ownersByKey(ownerRows);
  const byAccount = new Map<string, Array<{ record: UsageRecord; owner: Owner }>>();
  let dropped = 0;
  for (const record of batch.records) {
    const owner = owners.get(recordOwnerKey(ctx, record));
    if (!owner) {
      dropped++;
      continue;
    }
    const list = byAccount.get(owner.accountId) ?? [];
    list.push({ record, owner });
    byAccount.set(owner.accountId, list);
  }
  const messages: UsageMessage[] = [];
  for (const [accountId, entries] of [...byAccount].sort(([a], [b]) => a.localeCompare(b))) {
    messages.push(...(await accountMessages(batch.batch_id, accountId, entries)));
  }
  await enqueue(ctx, messages);

  const accepted = batch.records.length - dropped;
  const recorded = await ctx.db
    .insert(usageBatches)
    .values({ id: batch.batch_id, accepted, dropped, receivedAt: now() })
    .onConflictDoNothing()
    .returning({ id: usageBatches.id });
  // A concurrent retry recorded it first: its messages were enqueued twice and the stores apply them once.
  return { accepted, dropped, duplicate: recorded.length === 0 };
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

/** The live sub-users the records name (deleted ones are gone). */
function ownersQuery(ctx: DomainContext, records: UsageRecord[]) {
  const names = [...new Set(records.map((record) => recordOwnerKey(ctx, record).split(":")[1]).filter(Boolean))];
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

/** One account's share of a batch: aggregated, then packed into parts with deterministic keys. */
async function accountMessages(
  batchId: string,
  accountId: string,
  entries: Array<{ record: UsageRecord; owner: Owner }>,
): Promise<UsageMessage[]> {
  const cells = new Map<string, Cell>();
  const gates = new Map<string, Map<string, SessionUsage>>();
  for (const { record, owner } of entries) {
    const ts = Date.parse(record.ts);
    addToCell(cells, record, owner, ts);
    if (record.product !== "isp" && record.username.includes("-session-")) {
      const sessions = gates.get(owner.gateName) ?? new Map<string, SessionUsage>();
      addToSession(sessions, record, ts);
      gates.set(owner.gateName, sessions);
    }
  }
  const samples = sampleCandidates(entries);
  return pack({
    batchId,
    accountId,
    cells: [...cells.values()],
    gates: [...gates].map(([gateName, sessions]) => ({ gateName, sessions: [...sessions.values()] })),
    samples,
  });
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
 * ones); each stands for its share of that minute's requests in the batch.
 */
function sampleCandidates(entries: Array<{ record: UsageRecord; owner: Owner }>): SampleCandidate[] {
  // Ranked by a hash independent of the one the store keeps candidates by, so both choices stay uniform.
  const byMinute = new Map<number, Array<{ record: UsageRecord; owner: Owner; rank: number }>>();
  for (const { record, owner } of entries) {
    const ts = Date.parse(record.ts);
    const minute = ts - (ts % MINUTE_MS);
    const list = byMinute.get(minute) ?? [];
    list.push({ record, owner, rank: uniformHash(record.request_id, RANK_SEED) });
    byMinute.set(minute, list);
  }
  return [...byMinute.values()].flatMap((minuteEntries) => {
    const chosen = minuteEntries.sort((a, b) => a.rank - b.rank).slice(0, SAMPLE_CANDIDATES);
    const weight = minuteEntries.length / chosen.length;
    return chosen.map(({ record, owner }) => ({
      requestId: record.request_id,
      ts: Date.parse(record.ts),
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

/** Packs an account's usage into messages of at most ~100 KB, in a deterministic order. */
function pack(usage: {
  batchId: string;
  accountId: string;
  cells: Cell[];
  gates: GateUsage[];
  samples: SampleCandidate[];
}): UsageMessage[] {
  const messages: UsageMessage[] = [];
  let current = emptyPart(usage, 0);
  let size = 0;
  const add = (itemSize: number, place: (part: UsageMessage) => void) => {
    if (size + itemSize > MESSAGE_BYTES && size > 0) {
      messages.push(current);
      current = emptyPart(usage, messages.length);
      size = 0;
    }
    size += itemSize;
    place(current);
  };
  const sizeOf = (value: unknown) => JSON.stringify(value).length + 1;
  for (const cell of usage.cells) add(sizeOf(cell), (part) => part.cells.push(cell));
  // A gate's sessions may span parts (each part is applied once under its own key): one sub-user with many
  // sessions in a batch must not make a message past the queue's limit.
  for (const gate of usage.gates) {
    for (const session of gate.sessions) {
      add(sizeOf(session) + gate.gateName.length, (part) => {
        const entry = part.gates.find((known) => known.gateName === gate.gateName);
        if (entry) entry.sessions.push(session);
        else part.gates.push({ gateName: gate.gateName, sessions: [session] });
      });
    }
  }
  for (const sample of usage.samples) add(sizeOf(sample), (part) => part.samples.push(sample));
  messages.push(current);
  return messages;
}

function emptyPart(usage: { batchId: string; accountId: string }, part: number): UsageMessage {
  return {
    key: `${usage.batchId}:${usage.accountId}:${part}`,
    batchId: usage.batchId,
    accountId: usage.accountId,
    part,
    cells: [],
    gates: [],
    samples: [],
  };
}

/** Sends the messages in `sendBatch` calls within the queue's limits. */
async function enqueue(ctx: DomainContext, messages: UsageMessage[]): Promise<void> {
  let group: Array<{ body: UsageMessage; contentType: "json" }> = [];
  let size = 0;
  for (const message of messages) {
    const messageSize = JSON.stringify(message).length;
    if (group.length > 0 && (group.length >= SEND_BATCH_MESSAGES || size + messageSize > SEND_BATCH_BYTES)) {
      await ctx.env.USAGE_QUEUE.sendBatch(group);
      group = [];
      size = 0;
    }
    group.push({ body: message, contentType: "json" });
    size += messageSize;
  }
  if (group.length > 0) await ctx.env.USAGE_QUEUE.sendBatch(group);
}
