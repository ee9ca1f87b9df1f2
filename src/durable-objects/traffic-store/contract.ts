import type { CapBytes, CapKind } from "../../platform/cap-periods";
import { DAY, HOUR, MINUTE } from "../../platform/clock";
import { uniformHash } from "../../platform/sampling";
import type { BandwidthProduct, Product } from "../../vocabulary";

/**
 * The shapes the traffic Durable Objects exchange with the API (the queue consumer, the routes) and with each
 * other, and the row form of a cell. camelCase; the API's presenters turn them into JSON.
 */
export type TrafficProduct = Product;

/** Usage summed per minute and dimensions: what rollups are made of. */
export interface Cell {
  /** Epoch ms of the minute. */
  minute: number;
  product: TrafficProduct;
  subuserId: string;
  /** The exit country (lower-case ISO code). */
  region: string;
  asn: number;
  tag: string;
  carrier: string;
  /** ISP: the batch IP addressed; empty otherwise. */
  ip: string;
  bytesIn: number;
  bytesOut: number;
  requests: number;
  errors: number;
  /**
   * The HTTP status the client got and the gateway's error code (null: none). Both absent (null in rows) in cells
   * from before they were kept: such usage has no known status.
   */
  status?: number | null;
  errorCode?: string | null;
}

/**
 * A cell as usage messages carry it and as the store appends it to `pending`: the fields in `Cell`'s order,
 * without their names (half the bytes to serialize, queue and parse; nearly every record is its own cell).
 */
export type CellRow = [
  minute: number,
  product: TrafficProduct,
  subuserId: string,
  region: string,
  asn: number,
  tag: string,
  carrier: string,
  ip: string,
  bytesIn: number,
  bytesOut: number,
  requests: number,
  errors: number,
  status?: number | null,
  errorCode?: string | null,
];

/** Where each field of a `CellRow` stands: `cell[CELL.requests]`. */
export const CELL = {
  minute: 0,
  product: 1,
  subuserId: 2,
  region: 3,
  asn: 4,
  tag: 5,
  carrier: 6,
  ip: 7,
  bytesIn: 8,
  bytesOut: 9,
  requests: 10,
  errors: 11,
  status: 12,
  errorCode: 13,
} as const satisfies Record<keyof Cell, number>;

/** A cell as a row (the order of `CellRow`). */
export function cellRow(c: Cell): CellRow {
  return [
    c.minute,
    c.product,
    c.subuserId,
    c.region,
    c.asn,
    c.tag,
    c.carrier,
    c.ip,
    c.bytesIn,
    c.bytesOut,
    c.requests,
    c.errors,
    c.status ?? null,
    c.errorCode ?? null,
  ];
}

/** A row back as a cell (a row from before statuses were kept: of unknown status). */
export function cellOf(row: CellRow): Cell {
  return { ...cellDimensionsAndSums(row), status: cellStatus(row), errorCode: cellErrorCode(row) };
}

function cellDimensionsAndSums([
  minute,
  product,
  subuserId,
  region,
  asn,
  tag,
  carrier,
  ip,
  bytesIn,
  bytesOut,
  requests,
  errors,
]: CellRow): Cell {
  return { minute, product, subuserId, region, asn, tag, carrier, ip, bytesIn, bytesOut, requests, errors };
}

/** A cell's status, null when unknown (a cell from before statuses were kept). */
export function cellStatus(cell: CellRow): number | null {
  return cell[CELL.status] ?? null;
}

/** A cell's error code, null when it has none (or is from before codes were kept). */
export function cellErrorCode(cell: CellRow): string | null {
  return cell[CELL.errorCode] ?? null;
}

/**
 * Usage summed per minute, sub-user and target domain (the registrable domain of `target_host`): the `domain`
 * dimension, kept apart from cells so that it multiplies only its own rows. The sub-user is carried so that a
 * deleted sub-user's usage is dropped from it exactly as from the cells; the store keeps no sub-user per domain.
 */
export interface DomainCell {
  minute: number;
  product: TrafficProduct;
  subuserId: string;
  domain: string;
  bytesIn: number;
  bytesOut: number;
  requests: number;
  errors: number;
}

/** A domain cell as usage messages carry it: the fields in `DomainCell`'s order. */
export type DomainRow = [
  minute: number,
  product: TrafficProduct,
  subuserId: string,
  domain: string,
  bytesIn: number,
  bytesOut: number,
  requests: number,
  errors: number,
];

export function domainRow(c: DomainCell): DomainRow {
  return [c.minute, c.product, c.subuserId, c.domain, c.bytesIn, c.bytesOut, c.requests, c.errors];
}

export function domainCellOf([minute, product, subuserId, domain, bytesIn, bytesOut, requests, errors]: DomainRow) {
  return { minute, product, subuserId, domain, bytesIn, bytesOut, requests, errors } satisfies DomainCell;
}

/**
 * Distinct domains the store keeps per product and bucket of each tier; any further domain of that bucket is
 * added to the `(other)` row, so the rows of a bucket always sum to its total (docs/decisions.md).
 */
export const DOMAINS_PER_BUCKET = 100;
/** Rows a `group_by=domain` answer lists at most: the heaviest domains of the range, the rest summed in `(other)`. */
export const DOMAIN_ROWS = 100;
/** The row of the domains past either bound. */
export const OTHER_DOMAIN = "(other)";

/**
 * A sub-user's usage from one client block (IPv4 /24, IPv6 /64 of the record's `client_ip`) in a batch: when
 * first and last seen, requests and bytes (in + out).
 */
export interface ClientSource {
  subuserId: string;
  block: string;
  firstSeen: number;
  lastSeen: number;
  requests: number;
  bytes: number;
}

/** A client source as usage messages carry it: the fields in `ClientSource`'s order. */
export type SourceRow = [
  subuserId: string,
  block: string,
  firstSeen: number,
  lastSeen: number,
  requests: number,
  bytes: number,
];

/** Where each field of a `SourceRow` stands: `source[SOURCE.lastSeen]`. */
export const SOURCE = {
  subuserId: 0,
  block: 1,
  firstSeen: 2,
  lastSeen: 3,
  requests: 4,
  bytes: 5,
} as const satisfies Record<keyof ClientSource, number>;

export function sourceRow(s: ClientSource): SourceRow {
  return [s.subuserId, s.block, s.firstSeen, s.lastSeen, s.requests, s.bytes];
}

export function sourceOf([subuserId, block, firstSeen, lastSeen, requests, bytes]: SourceRow): ClientSource {
  return { subuserId, block, firstSeen, lastSeen, requests, bytes };
}

/** Client sources are kept this long after they were last seen (`GET /subusers/{id}/sources`). */
export const SOURCES_KEPT_MS = 30 * DAY;
/** Blocks kept per sub-user: past it, the least recently seen are forgotten. */
export const SOURCES_PER_SUBUSER = 1000;
/** At most one `subuser.new_source` alert per sub-user in this window; later new blocks wait and are counted. */
export const NEW_SOURCE_ALERT_WINDOW_MS = 15 * MINUTE;
/** Blocks an alert names (it counts them all). */
export const NEW_SOURCE_ALERT_BLOCKS = 10;

/**
 * New client blocks of a sub-user to announce (`subuser.new_source`): `newBlocks` since its previous alert, the
 * first of them by name. Handed out by every ingest until confirmed, so an alert lost in flight is sent again
 * (its `at` makes it the same event).
 */
export interface SourceAlert {
  subuserId: string;
  at: number;
  newBlocks: number;
  blocks: string[];
}

/** What the caller did with an alert: recorded as an event, or dropped (its sub-user did not opt in). */
export interface SourceAlertReceipt {
  subuserId: string;
  at: number;
  recorded: boolean;
}

/** How far above its baseline a sub-user's traffic goes before a spike alert (`spike-detector.ts`). */
export type SpikeSensitivity = "low" | "medium" | "high";

/** A sub-user's spike alerts: a sensitivity, or off (the store's default for a sub-user it was not told of: medium). */
export type SpikeSetting = SpikeSensitivity | "off";

/**
 * An episode acknowledged as normal taught its sub-user: its baseline is at least `rate` (bytes, requests per hour)
 * until `until` (`spike-detector.ts`).
 */
export interface Lesson {
  spikeId: string;
  rate: [bytes: number, requests: number];
  until: number;
}

/** A rate per hour. */
export interface HourlyRate {
  bytesPerHour: number;
  requestsPerHour: number;
}

/**
 * A spike episode of a sub-user opened (`started`) or closed (`ended`): handed out by every ingest until the caller
 * confirms it recorded it (the episode id and kind make it the same event). Hosts are the sampled request log's
 * (the heaviest by sampled bytes); sources the client blocks seen since the episode started.
 */
export interface SpikeAlert {
  kind: "started" | "ended";
  spikeId: string;
  subuserId: string;
  sensitivity: SpikeSensitivity;
  startedAt: number;
  /** When the episode was judged open (`started`) or over (`ended`). */
  at: number;
  observed: HourlyRate;
  baseline: HourlyRate & { weeks: number; days: number };
  /** The sensitivity's floor: the least an episode is measured against (a new sub-user's whole baseline). */
  floor: HourlyRate;
  peak: HourlyRate;
  /** The episode's usage so far. */
  bytes: number;
  requests: number;
  sampledHosts: Array<{ host: string; bytes: number }>;
  sampledBytes: number;
  topSources: SourceEntry[];
}

export interface SpikeAlertReceipt {
  spikeId: string;
  kind: SpikeAlert["kind"];
}

/** One client block of a sub-user, as `GET /subusers/{id}/sources` lists them. */
export interface SourceEntry {
  block: string;
  firstSeen: number;
  lastSeen: number;
  requests: number;
  bytes: number;
}

/** One entry of the sampled request log. */
export interface RequestSample {
  requestId: string;
  ts: number;
  product: TrafficProduct;
  subuserId: string;
  method: string;
  targetHost: string;
  status: number;
  bytes: number;
  exitIp: string;
  exitGeo: string;
  exitAsn: number;
  tag: string | null;
}

/** A request the producer offers the log: it stands for `weight` of the account's requests in its minute. */
export interface SampleCandidate extends RequestSample {
  weight: number;
}

/** A request sample's fields in `RequestSample`'s order, without their names (rows travel and store lighter). */
export type RequestSampleFields = [
  requestId: string,
  ts: number,
  product: TrafficProduct,
  subuserId: string,
  method: string,
  targetHost: string,
  status: number,
  bytes: number,
  exitIp: string,
  exitGeo: string,
  exitAsn: number,
  tag: string | null,
];

/**
 * Where each field of `RequestSampleFields` stands, in every row that starts with them (`SampleRow`, the store's
 * `LoggedSample`): `sample[SAMPLE.ts]`.
 */
export const SAMPLE = {
  requestId: 0,
  ts: 1,
  product: 2,
  subuserId: 3,
  method: 4,
  targetHost: 5,
  status: 6,
  bytes: 7,
  exitIp: 8,
  exitGeo: 9,
  exitAsn: 10,
  tag: 11,
} as const satisfies Record<keyof RequestSample, number>;

/** A request sample's fields as a row (the order of `RequestSampleFields`). */
export function requestSampleFields(s: RequestSample): RequestSampleFields {
  return [
    s.requestId,
    s.ts,
    s.product,
    s.subuserId,
    s.method,
    s.targetHost,
    s.status,
    s.bytes,
    s.exitIp,
    s.exitGeo,
    s.exitAsn,
    s.tag,
  ];
}

/** A row's request sample fields back as a sample (whatever follows them in the row is left out). */
export function requestSampleOf([
  requestId,
  ts,
  product,
  subuserId,
  method,
  targetHost,
  status,
  bytes,
  exitIp,
  exitGeo,
  exitAsn,
  tag,
]: readonly [...RequestSampleFields, ...unknown[]]): RequestSample {
  return { requestId, ts, product, subuserId, method, targetHost, status, bytes, exitIp, exitGeo, exitAsn, tag };
}

/** A sample candidate as usage messages carry it: the fields in `SampleCandidate`'s order, without their names. */
export type SampleRow = [...RequestSampleFields, weight: number];

/** Where each field of a `SampleRow` stands: the request sample's fields, then the weight. */
const SAMPLE_ROW = { ...SAMPLE, weight: 12 } as const;

export function sampleRow(s: SampleCandidate): SampleRow {
  return [...requestSampleFields(s), s.weight];
}

export function sampleOf(row: SampleRow): SampleCandidate {
  return { ...requestSampleOf(row), weight: row[SAMPLE_ROW.weight] };
}

/** One of a session's latest requests. */
export interface SessionRequest {
  requestId: string;
  ts: number;
  method: string;
  targetHost: string;
  status: number;
  bytes: number;
  exitIp: string;
}

/** One sticky session's usage in a batch (its records summed; the username is the session key). */
export interface SessionUsage {
  username: string;
  product: TrafficProduct;
  firstTs: number;
  lastTs: number;
  /** The exit IP of the session's earliest record: it pins a session that has none yet. */
  firstExitIp: string;
  /** The exit IP of the latest record flagged `repinned`: the pin moves there. */
  repinnedExitIp: string | null;
  bytes: number;
  requests: number;
  /** The session's latest requests in the batch, newest first (at most 10). */
  lastRequests: SessionRequest[];
}

/** A sticky session as its gate knows it; `version` grows with every change, so late copies are ignored. */
export interface SessionSnapshot {
  id: string;
  /** The session key (the full gateway username, lower-case) and its generation, for sessions decided at the node. */
  key?: string;
  generation?: number;
  subuserId: string;
  gateName: string;
  product: TrafficProduct;
  sessionId: string;
  region: string;
  state: string | null;
  city: string | null;
  asn: number | null;
  exitIp: string | null;
  startedAt: number;
  expiresAt: number;
  status: "active" | "terminated";
  terminatedAt: number | null;
  bytesUsed: number;
  requests: number;
  repinned: boolean;
  version: number;
}

/** A sub-user gate's share of a usage message: its sessions' usage, from records that did not name their session. */
export interface GateUsage {
  gateName: string;
  sessions: SessionUsage[];
}

/**
 * A sticky session's usage in a part, for the session the gateway names (`session` on its records: the id the
 * gate's decision gave it) or the gate resolved: who it is (the username's segments, its times from the gate's pin)
 * and what it carried. The account's store sums these into the session's record. A delta with a `key` is usage of a
 * session a node decided (`session_gen` on its records: one per key, generation and record minute), whose id and
 * times are provisional (`sessionIdAt` from the first record's time): the store assigns it to a session before it
 * keeps it (`SessionIndex.assign`), and the arrival row keeps it with the assigned identity.
 */
export type SessionDelta = Pick<
  SessionSnapshot,
  | "id"
  | "key"
  | "generation"
  | "subuserId"
  | "gateName"
  | "product"
  | "sessionId"
  | "region"
  | "state"
  | "city"
  | "asn"
  | "startedAt"
  | "expiresAt"
> & { usage: SessionUsage };

/**
 * The account's billing figures as D1 holds them (the source of truth for what was bought and for caps): what the
 * store meters against. It is given them in full when it starts metering and in part with every settlement's
 * answer, and told of top-ups, cap changes and deletions as they happen.
 */
export interface MeterFigures {
  /** The bandwidth pools (gateway products). */
  pools: Array<{ product: BandwidthProduct; purchasedBytes: number; usedBytes: number; topUpCount: number }>;
  /** Sub-users with a cap (monthly, daily or lifetime) or deleted. */
  subusers: Array<{ subuserId: string; caps: CapBytes; deletedAt: number | null }>;
  /**
   * Capped sub-users' usage per cap period, as D1's `subuser_monthly_usage` names it (`month`): a UTC month
   * (`2026-11`), a UTC day (`2026-11-28`) or `lifetime`.
   */
  months: Array<{ subuserId: string; month: string; usedBytes: number }>;
}

/** A sub-user's usage (bytes in + out, all products) over each cap's period: this UTC month, this UTC day, its life. */
export type PeriodUsage = Record<CapKind, number>;

/**
 * Usage metered in the store and not yet in D1, numbered so that D1 applies each once: bytes to add to each pool,
 * and capped sub-users' figures per cap period, in `month` as in `MeterFigures` (bytes so far: D1 keeps the higher
 * of its own and this one).
 */
export interface Settlement {
  seq: number;
  pools: Array<{ product: BandwidthProduct; bytes: number }>;
  months: Array<{ subuserId: string; month: string; usedBytes: number }>;
}

/**
 * How far after its batch's arrival a record may be counted (a gateway's clock running a little ahead): the usage
 * route counts a later record at this bound, so a part's oldest usage, less this, is never after its batch first
 * arrived. The store looks for a part's key from there.
 */
export const USAGE_CLOCK_SKEW_MS = 5 * MINUTE;

/** What one usage part brings to its account's store. */
export interface StorePart {
  key: string;
  /**
   * When the usage route enqueued this copy of the part (or the first queue's message time). A copy enqueued by
   * an earlier post of the batch, whose ledger record failed, was applied before it: the store looks for the key
   * from this time or the part's oldest usage less `USAGE_CLOCK_SKEW_MS`, whichever is earlier. Absent in parts
   * from before it was carried.
   */
  receivedAt?: number;
  cells: Cell[];
  /** Absent in parts from before the domain dimension. */
  domains?: DomainCell[];
  /** Absent in parts from before client sources. */
  sources?: ClientSource[];
  samples: SampleCandidate[];
  /** Sticky sessions' usage (absent in parts from before the store summed sessions). */
  sessions?: SessionDelta[];
}

/** What a consumer batch brings to one account's store: its usage parts. */
export interface StoreIngest {
  accountId: string;
  /** The account's shard the store is (absent: 0, the account's own store). */
  shard?: number;
  parts: StorePart[];
}

/** What a store sends on the usage queue when usage stopped arriving and some of it is not settled yet. */
export interface SettleMessage {
  settle: string;
  /** The account's shard (absent: 0). */
  shard?: number;
}

/**
 * `unconfigured`: the store has not started metering; call again with the account's figures from D1. `applied`:
 * how many parts were new, and the settlement to hand to D1 now, if one is due.
 */
export type IngestOutcome =
  | { outcome: "unconfigured" }
  | {
      outcome: "applied";
      applied: number;
      settlement: Settlement | null;
      sourceAlerts: SourceAlert[];
      spikeAlerts: SpikeAlert[];
    };

/* Rollups: what a traffic query asks and answers. */
export type Resolution = "1m" | "5m" | "1h" | "1d";
export const RESOLUTION_MS: Record<Resolution, number> = { "1m": MINUTE, "5m": 5 * MINUTE, "1h": HOUR, "1d": DAY };
export type Dimension = "subuser" | "region" | "asn" | "tag" | "ip" | "status" | "error_code";
export type GroupBy = Dimension | "day" | "hour" | "domain";

export interface Metrics {
  bytesIn: number;
  bytesOut: number;
  requests: number;
  errors: number;
}

export interface TrafficQuery {
  product: TrafficProduct;
  /** Aligned to `resolution` by the caller. */
  from: number;
  to: number;
  resolution: Resolution;
  groupBy: GroupBy | null;
  /** `subuserIds`: only these sub-users' traffic (one a filter names, or those a bound key reaches). */
  filters: { subuserIds?: string[]; region?: string; tag?: string };
}

export interface TrafficRow extends Metrics {
  /**
   * The group's key: a sub-user id, region, ASN, tag, IP, status, error code or domain; the start (ms) of a day or
   * hour; null for the total (and, grouped by status, for usage whose status is not known).
   */
  key: string | number | null;
  carrierName?: string | null;
}

/* Report files: paged reads of the rollups and the request log. */
export interface ReportScope {
  from: number;
  to: number;
  /** null = every product / sub-user. */
  products: string[] | null;
  subuserIds: string[] | null;
  /** Traffic days: per sub-user (the default), or per target domain (then without a sub-user filter). */
  groupBy?: "subuser" | "domain";
}

export interface TrafficDayRow {
  day: number;
  product: string;
  /** Empty when grouped per domain. */
  subuserId: string;
  /** Grouped per domain: the domain (as `GET /{product}/traffic?group_by=domain` names it). */
  domain?: string;
  bytesIn: number;
  bytesOut: number;
  requests: number;
  errors: number;
}

export interface TrafficDayCursor {
  day: number;
  product: string;
  subuserId: string;
  domain?: string;
}

export interface IpHealth {
  ip: string;
  requests: number;
  errors: number;
  lastSeenAt: number | null;
}

/** A read of the sampled request log: newest first, up to `limit`; `subuserIds`: only these sub-users'. */
export interface RequestLogQuery {
  product: TrafficProduct;
  subuserIds?: string[];
  limit: number;
}

/* Sessions: the account's session index. */
export interface SessionFilters {
  product: TrafficProduct;
  /** Only these sub-users' sessions. */
  subuserIds?: string[];
  sessionId?: string;
  region?: string;
  asn?: number;
  repinned?: boolean;
  /** Keyset: sessions with a smaller id (older). */
  before?: string;
  limit: number;
}

/* The sampled request log: which requests it keeps (the usage route leaves out by the same rule). */
/** An account under this many requests a minute has every request logged; above it, a uniform sample of that size. */
export const FULL_LOG_RATE = 100;

/** The rate a request is sampled at: its account's requests in the request's own minute (all products). */
export function samplingRate(ts: number, requestsInMinute: (minute: number) => number): number {
  return requestsInMinute(ts - (ts % MINUTE));
}

/**
 * The rate of requests a minute below which a candidate standing for `weight` requests is kept: it is kept with
 * probability min(1, 100 / requests-per-minute × weight), decided by a hash `u` of its request id, which holds
 * exactly while the rate is below 100 × weight / u. Stored with the entry, so a minute whose count grows later
 * drops what it would no longer keep with one comparison.
 */
export function keptBelowRate(sample: { requestId: string; weight: number }): number {
  const u = uniformHash(sample.requestId);
  return u === 0 ? Number.POSITIVE_INFINITY : (FULL_LOG_RATE * sample.weight) / u;
}

/**
 * Whether the log keeps a candidate in a minute the account made `requestsPerMinute` requests in. The same
 * candidate is kept at any lower rate, which lets the usage route leave out candidates by a rate it knows to be
 * lower than the store's.
 */
export function keepsSample(sample: { requestId: string; weight: number }, requestsPerMinute: number): boolean {
  return Math.max(1, requestsPerMinute) < keptBelowRate(sample);
}
