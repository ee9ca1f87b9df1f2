import type { Product } from "../../db/schema";
import { addSessionUsage } from "../../durable-objects/subuser-gate/contract";
import { timeOfId } from "../../platform/ids";
import { clientBlock } from "../../platform/ip";
import { uniformHash } from "../../platform/sampling";
import { sessionIdAt, sessionKey } from "../../platform/sticky-sessions";
import type { GatewayTarget } from "../gateway/username";
import type { Share } from "./message-packing";
import { targetDomain } from "./target-domain";
import type { Cell, ClientSource, DomainCell, SampleCandidate, SessionDelta, SessionUsage } from "./usage-messages";
import type { UsageRecord } from "./usage-records";

/** Request-log candidates per account, minute and batch; the account's store thins them to a uniform sample. */
const SAMPLE_CANDIDATES = 100;
const MINUTE_MS = 60_000;
const RANK_SEED = 0x9747b28c;

/** A record, its sub-user (id and gateway name), its time (ms) and, for gateway products, its username's target. */
export interface OwnedRecord {
  record: UsageRecord;
  owner: { subuserId: string; gateName: string };
  ts: number;
  target?: GatewayTarget;
}

/**
 * One account's share of a usage batch, aggregated: rollup cells (usage summed per minute and dimensions), domain
 * cells (per minute, sub-user and target domain), sticky sessions' usage (per session key, generation and minute for
 * records a node decided, per session the records name, or per gate for records that name none), request-log
 * candidates. Pure and deterministic: the same records give the same share.
 * A sharded account has a share per store shard, of the records of the shard's sub-users.
 */
export function accountShare(accountId: string, entries: OwnedRecord[], shard = 0): Share {
  const cells = new Map<string, Cell>();
  const domains = new Map<string, DomainCell>();
  const domainOf = memoized(targetDomain);
  const sources = new Map<string, ClientSource>();
  const blockOf = memoized((ip: string) => clientBlock(ip) ?? "");
  const gates = new Map<string, Map<string, SessionUsage>>();
  const named = new Map<string, SessionDelta>();
  const keyed = new Map<string, SessionDelta>();
  for (const { record, owner, ts, target } of entries) {
    addToCell(cells, record, owner, ts);
    addToDomain(domains, record, owner, ts, domainOf(record.target_host));
    if (record.client_ip) addToSource(sources, record, owner.subuserId, ts, blockOf(record.client_ip));
    if (record.product === "isp" || !record.username.includes("-session-")) continue;
    if (record.session_gen !== undefined && target?.sessionId && target.sesstime !== null) {
      addToKeyedSession(keyed, record, record.session_gen, owner, target, ts);
      continue;
    }
    if (record.session && target?.sessionId && target.sesstime !== null) {
      addToNamedSession(named, record, record.session, owner, target, ts);
      continue;
    }
    const sessions = gates.get(owner.gateName) ?? new Map<string, SessionUsage>();
    addToSession(sessions, record, ts);
    gates.set(owner.gateName, sessions);
  }
  return {
    accountId,
    ...(shard === 0 ? {} : { shard }),
    cells: [...cells.values()],
    domains: [...domains.values()],
    sources: [...sources.values()],
    sessions: [...gates].flatMap(([gateName, sessions]) =>
      [...sessions.values()].map((usage) => ({ gateName, usage })),
    ),
    sessionDeltas: [...named.values(), ...provisionallyNamed(keyed)],
    samples: sampleCandidates(entries),
  };
}

function addToCell(cells: Map<string, Cell>, record: UsageRecord, owner: OwnedRecord["owner"], ts: number): void {
  const minute = ts - (ts % MINUTE_MS);
  const region = record.exit_geo.split("/")[0] ?? "";
  const tag = record.tag ?? "";
  const carrier = record.carrier_name ?? "";
  const ip = record.product === "isp" ? (record.dest_ip ?? "") : "";
  const key = [
    minute,
    record.product,
    owner.subuserId,
    region,
    record.exit_asn,
    tag,
    carrier,
    ip,
    record.status,
    record.error_code ?? "",
  ].join("|");
  const cell = cells.get(key) ?? {
    minute,
    product: record.product,
    subuserId: owner.subuserId,
    region,
    asn: record.exit_asn,
    tag,
    carrier,
    ip,
    ...noUsage(),
    status: record.status,
    errorCode: record.error_code,
  };
  addRecord(cell, record);
  cells.set(key, cell);
}

function addToDomain(
  domains: Map<string, DomainCell>,
  record: UsageRecord,
  owner: OwnedRecord["owner"],
  ts: number,
  domain: string,
): void {
  const minute = ts - (ts % MINUTE_MS);
  const key = `${minute}|${record.product}|${owner.subuserId}|${domain}`;
  const cell = domains.get(key) ?? {
    minute,
    product: record.product,
    subuserId: owner.subuserId,
    domain,
    ...noUsage(),
  };
  addRecord(cell, record);
  domains.set(key, cell);
}

/** A record's client block, per sub-user: when first and last seen in the batch, requests and bytes. */
function addToSource(
  sources: Map<string, ClientSource>,
  record: UsageRecord,
  subuserId: string,
  ts: number,
  block: string,
): void {
  if (block === "") return;
  const key = `${subuserId}|${block}`;
  const source = sources.get(key) ?? { subuserId, block, firstSeen: ts, lastSeen: ts, requests: 0, bytes: 0 };
  source.firstSeen = Math.min(source.firstSeen, ts);
  source.lastSeen = Math.max(source.lastSeen, ts);
  source.requests += 1;
  source.bytes += record.bytes_in + record.bytes_out;
  sources.set(key, source);
}

function noUsage() {
  return { bytesIn: 0, bytesOut: 0, requests: 0, errors: 0 };
}

/** A record's usage added to a cell's sums. */
function addRecord(cell: Cell | DomainCell, record: UsageRecord): void {
  cell.bytesIn += record.bytes_in;
  cell.bytesOut += record.bytes_out;
  cell.requests += 1;
  if (record.error_code !== null) cell.errors += 1;
}

/** `f` computed once per argument (a batch repeats few target hosts). */
function memoized(f: (value: string) => string): (value: string) => string {
  const known = new Map<string, string>();
  return (value) => {
    let result = known.get(value);
    if (result === undefined) {
      result = f(value);
      known.set(value, result);
    }
    return result;
  };
}

/** A record of a session it names: its usage added to the session's, with who the session is. */
function addToNamedSession(
  named: Map<string, SessionDelta>,
  record: UsageRecord,
  id: string,
  owner: OwnedRecord["owner"],
  target: GatewayTarget,
  ts: number,
): void {
  const known = named.get(id);
  if (known) {
    addSessionUsage(known.usage, sessionUsageOf(record, ts));
    return;
  }
  named.set(id, { id, ...sessionDeltaOf(record, owner, target, timeOfId(id), ts) });
}

/** Who a sticky record's session is (the username's target, the record's owner, its times) and the record's usage. */
function sessionDeltaOf(
  record: UsageRecord,
  owner: OwnedRecord["owner"],
  target: GatewayTarget,
  startedAt: number,
  ts: number,
): Omit<SessionDelta, "id" | "key" | "generation"> {
  return {
    subuserId: owner.subuserId,
    gateName: owner.gateName,
    product: record.product,
    sessionId: target.sessionId as string,
    region: target.region,
    state: target.state,
    city: target.city,
    asn: target.asn,
    startedAt,
    expiresAt: startedAt + (target.sesstime as number) * MINUTE_MS,
    usage: sessionUsageOf(record, ts),
  };
}

/**
 * A record of a session a node decided (`session_gen`): its usage added to its session key's, generation's and
 * minute's entry (so one entry never spans a session's expiry by more than a minute), with who the session is: the
 * username's target and the record's owner. The id and times are provisional (`provisionallyNamed`); the account's
 * store names the session.
 */
function addToKeyedSession(
  keyed: Map<string, SessionDelta>,
  record: UsageRecord,
  generation: number,
  owner: OwnedRecord["owner"],
  target: GatewayTarget,
  ts: number,
): void {
  const key = sessionKey(record.username);
  const minute = ts - (ts % MINUTE_MS);
  const entry = `${key}\n${generation}\n${minute}`;
  const known = keyed.get(entry);
  if (known) {
    addSessionUsage(known.usage, sessionUsageOf(record, ts));
    return;
  }
  keyed.set(entry, { id: "", key, generation, ...sessionDeltaOf(record, owner, target, ts, ts) });
}

/**
 * Keyed entries with their provisional names: per key and generation, in time order, a session starts at the first
 * record's time and lasts its sesstime; an entry whose first record falls past it starts the next. The id is the one
 * the store mints for a session it first sees this way (`sessionIdAt`); the store may give the entry an earlier
 * session's (a session its usage from other batches or nodes started).
 */
function provisionallyNamed(keyed: Map<string, SessionDelta>): SessionDelta[] {
  const byKey = Map.groupBy(keyed.values(), (delta) => `${delta.key}\n${delta.generation}`);
  return [...byKey.values()].flatMap((deltas) => {
    let start = Number.NEGATIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    return deltas
      .sort((a, b) => a.usage.firstTs - b.usage.firstTs)
      .map((delta) => {
        if (delta.usage.firstTs >= end) {
          end = delta.usage.firstTs + (delta.expiresAt - delta.startedAt);
          start = delta.usage.firstTs;
        }
        const id = sessionIdAt(delta.key as string, delta.generation as number, start);
        return { ...delta, id, startedAt: start, expiresAt: end };
      });
  });
}

function addToSession(sessions: Map<string, SessionUsage>, record: UsageRecord, ts: number): void {
  const session = sessions.get(record.username);
  if (session) addSessionUsage(session, sessionUsageOf(record, ts));
  else sessions.set(record.username, sessionUsageOf(record, ts));
}

/** One record's session usage. */
function sessionUsageOf(record: UsageRecord, ts: number): SessionUsage {
  const bytes = record.bytes_in + record.bytes_out;
  return {
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
}

/**
 * Per minute, at most 100 candidates, chosen uniformly by a hash of the request id; each stands for its share of
 * that minute's requests in the batch. They depend on the batch alone, never on what the account's store has
 * counted so far, so a retry of the batch sends exactly the same ones; the store keeps those its rate samples.
 */
export function sampledEntries(entries: OwnedRecord[]): Array<{ entry: OwnedRecord; weight: number }> {
  const byMinute = Map.groupBy(entries, (entry) => entry.ts - (entry.ts % MINUTE_MS));
  return [...byMinute.values()].flatMap((minuteEntries) => {
    const chosen = minuteEntries.length <= SAMPLE_CANDIDATES ? minuteEntries : uniformChoice(minuteEntries);
    const weight = minuteEntries.length / chosen.length;
    return chosen.map((entry) => ({ entry, weight }));
  });
}

function sampleCandidates(entries: OwnedRecord[]): SampleCandidate[] {
  return sampledEntries(entries).map(({ entry: { record, owner, ts }, weight }) => ({
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
}

/** 100 of a minute's entries, ranked by a hash independent of the one the store keeps candidates by. */
function uniformChoice(entries: OwnedRecord[]): OwnedRecord[] {
  return entries
    .map((entry) => ({ entry, rank: uniformHash(entry.record.request_id, RANK_SEED) }))
    .sort((a, b) => a.rank - b.rank)
    .slice(0, SAMPLE_CANDIDATES)
    .map(({ entry }) => entry);
}
