import { CAP_KINDS, periodsAt } from "../../platform/cap-periods";
import { DAY, HOUR } from "../../platform/clock";
import { products } from "../../vocabulary";
import { type AreaStorage, migrate } from "../shared/storage-versions";
import { addSessionUsage, copySessionUsage } from "../subuser-gate/contract";
import { ARRIVALS_KEPT_MS, type ArrivalRow, ArrivalRows, LOGGED_SAMPLE } from "./arrival-rows";
import { ClientSources } from "./client-sources";
import {
  CELL,
  type Cell,
  cellRow,
  type IngestOutcome,
  type IpHealth,
  type Lesson,
  type MeterFigures,
  type PeriodUsage,
  type ReportScope,
  type RequestLogQuery,
  type RequestSample,
  type SessionDelta,
  type SessionFilters,
  type SessionRequest,
  type SessionSnapshot,
  type Settlement,
  type SourceAlertReceipt,
  type SourceEntry,
  type SourceRow,
  type SpikeAlert,
  type SpikeAlertReceipt,
  type SpikeSetting,
  type StoreIngest,
  type StorePart,
  sourceRow,
  type TrafficDayCursor,
  type TrafficDayRow,
  type TrafficQuery,
  type TrafficRow,
  USAGE_CLOCK_SKEW_MS,
} from "./contract";
import { FOLD_LATENESS_MS, FoldedTiers, floorTo, TIERS } from "./folded-tiers";
import { TRAFFIC_LAYOUT } from "./layout";
import { RequestLog } from "./request-log";
import { SessionIndex } from "./session-index";
import { SpikeWatch } from "./spike-watch";
import {
  boundDomains,
  DOMAIN_SUMS,
  type DomainSums,
  MARGINAL,
  type Marginal,
  mergeTotals,
  minuteTotals,
  sumCells,
} from "./summary";
import { TrafficQueries } from "./traffic-queries";
import { TrafficReports } from "./traffic-reports";
import { addShare, SETTLE_INTERVAL_MS, UsageMeter } from "./usage-meter";

/** With no new usage, what is past its horizon is still forgotten this often. */
const PRUNE_INTERVAL_MS = HOUR;

/**
 * One account's traffic over one SQLite database, synchronous: the arrival rows (everything an ingest brings, one
 * row written per ingest), the folded tiers and their cumulative series, the sampled request log, client sources,
 * the session index and the usage meter. The `TrafficStore` Durable Object serves it (and wakes when `nextWake`
 * says); the scale simulation runs the same code on `node:sqlite`. A usage part is applied once, in one synchronous
 * step that writes the row holding its key together with everything it brought, so a crash either applied all of
 * it or none.
 */
export class AccountTraffic {
  readonly #sql: SqlStorage;
  readonly #arrivals: ArrivalRows;
  readonly #tiers: FoldedTiers;
  readonly #queries: TrafficQueries;
  readonly #reports: TrafficReports;
  readonly #log: RequestLog;
  readonly #sources: ClientSources;
  readonly #sessions: SessionIndex;
  readonly #meter: UsageMeter;
  readonly #spikes: SpikeWatch;
  readonly #carriers = new Map<number, string>();
  /** Grows with every change of the usage (queries cache by it). */
  #version = 0;
  #pruneBy: number | null = null;
  /** When a `settle` message was last asked for (asked again a settlement interval later if still due). */
  #settleAskedAt: number | null = null;

  constructor(storage: AreaStorage) {
    const sql = storage.sql;
    this.#sql = sql;
    migrate(storage, "traffic_layout", TRAFFIC_LAYOUT);
    this.#meter = new UsageMeter(storage);
    this.#arrivals = new ArrivalRows(sql);
    this.#tiers = new FoldedTiers(sql);
    this.#meter.restore(
      sql
        .exec<{ metered: string }>("SELECT metered FROM arrivals")
        .toArray()
        .map((r) => JSON.parse(r.metered)),
    );
    for (const row of sql.exec<{ asn: number; carrier: string }>("SELECT asn, carrier FROM asn_carriers")) {
      this.#carriers.set(row.asn, row.carrier);
    }
    this.#queries = new TrafficQueries(this.#arrivals, this.#tiers, () => this.#carriers);
    this.#reports = new TrafficReports(this.#queries);
    this.#log = new RequestLog(this.#arrivals, this.#tiers, (minute) => this.#requestsIn(minute));
    this.#sources = new ClientSources(sql, this.#arrivals);
    this.#sessions = new SessionIndex(sql, this.#arrivals);
    this.#spikes = new SpikeWatch(sql);
  }

  /**
   * Applies usage parts, each once (keys not applied before, in this row or any since the part was received), and
   * meters them: one row written for all of them. `figures` start the meter on first use.
   */
  ingest(input: StoreIngest, figures: MeterFigures | undefined, at: number): IngestOutcome {
    if (!this.#meter.configured) {
      if (!figures) return { outcome: "unconfigured" };
      this.#startPeriods(this.#meter.configure(input.accountId, input.shard ?? 0, figures), at);
    }
    const distinct = new Set<string>();
    const fresh = input.parts.filter(
      (part) =>
        !distinct.has(part.key) && distinct.add(part.key) && !this.#arrivals.applied(part.key, lookedForSince(part)),
    );
    if (fresh.length === 0) {
      this.#sources.ingest([], { minute: 0, tag: 0 }, at);
      return {
        outcome: "applied",
        applied: 0,
        settlement: this.#meter.settlement(at, false),
        sourceAlerts: this.#sources.alerts(),
        spikeAlerts: this.#spikes.alerts(),
      };
    }
    const { row, replaced } = this.#arrivals.current(at);
    if (replaced) this.#retire(replaced, row, at);
    this.#pruneBy ??= at + PRUNE_INTERVAL_MS;
    const rises = this.#apply(row, fresh, at);
    this.#arrivals.write(row);
    this.#version++;
    const settlement = this.#meter.settlement(at, rises);
    return {
      outcome: "applied",
      applied: fresh.length,
      settlement,
      sourceAlerts: this.#sources.alerts(),
      spikeAlerts: this.#spikes.alerts(),
    };
  }

  /** Adds fresh parts to the open row (and late usage to the folded tiers); whether a threshold was passed. */
  #apply(row: ArrivalRow, fresh: StorePart[], at: number): boolean {
    row.keys.push(...fresh.map((part) => part.key));
    // A deleted sub-user's usage past its drain counts nowhere: nor in domains, sources or the log.
    const admitted = this.#meter.admit(
      fresh.flatMap((part) => part.cells),
      fresh.flatMap((part) => part.samples),
      at,
    );
    const cells = admitted.cells.map(cellRow);
    const domains: DomainSums[] = this.#meter
      .admitted(
        fresh.flatMap((part) => part.domains ?? []),
        (cell) => cell.minute,
      )
      .map((d) => [d.minute, d.product, d.domain, d.bytesIn, d.bytesOut, d.requests, d.errors]);
    const sources: SourceRow[] = this.#meter
      .admitted(
        fresh.flatMap((part) => part.sources ?? []),
        (source) => source.firstSeen,
      )
      .map(sourceRow);
    // Sessions a node decided are named now, so that the row keeps each delta with its session's identity.
    const sessions = this.#sessions.assign(fresh.flatMap((part) => part.sessions ?? []));

    const ingested = new Map<number, number>();
    for (const cell of cells) {
      ingested.set(cell[CELL.minute], (ingested.get(cell[CELL.minute]) ?? 0) + cell[CELL.requests]);
    }
    const requestsIn = (minute: number) => this.#requestsIn(minute) + (ingested.get(minute) ?? 0);
    const samples = this.#log.keep(admitted.samples, at, requestsIn);

    const late = {
      cells: cells.filter((cell) => this.#tiers.isFolded(cell[CELL.minute])),
      domains: domains.filter((domain) => this.#tiers.isFolded(domain[DOMAIN_SUMS.minute])),
      samples: samples.filter((sample) => this.#tiers.isFolded(sample[LOGGED_SAMPLE.ts])),
    };
    if (late.cells.length + late.domains.length + late.samples.length > 0) this.#tiers.patch(late, at);

    row.content.cells = sumCells([...row.content.cells, ...cells]);
    row.content.domains = boundDomains([...row.content.domains, ...domains]);
    mergeTotals(row.totals, minuteTotals(cells));
    for (const cell of cells) {
      row.firstMinute = Math.min(row.firstMinute, cell[CELL.minute]);
      row.lastMinute = Math.max(row.lastMinute, cell[CELL.minute]);
    }
    row.samples.push(...samples);
    if (sources.length > 0) row.sources.push([row.keys.length, sources]);
    row.sessions = mergeSessions(row.sessions, sessions);
    this.#learnCarriers(admitted.cells);

    this.#sources.ingest(sources, { minute: row.minute, tag: row.keys.length }, at);
    this.#sessions.apply(sessions);
    this.#log.add(samples, at);
    const { share, rises } = this.#meter.meter(admitted.cells, at);
    const seq = String(this.#meter.openSeq);
    if (share) row.metered[seq] = addShare(row.metered[seq] ?? { pools: {}, months: {} }, share);
    return rises;
  }

  /**
   * A row of 25 hours ago is about to be overwritten: everything in it is folded first, its sources snapshotted,
   * and what it metered for the open settlement carried into the new row.
   */
  #retire(replaced: ArrivalRow, row: ArrivalRow, at: number): void {
    if (replaced.lastMinute >= this.#tiers.watermark("5m")) this.maintain(at);
    if (this.#sources.needsSnapshotBefore(replaced.minute, replaced.sources.length)) this.#sources.maintain(at, true);
    const seq = String(this.#meter.openSeq);
    const carried = replaced.metered[seq];
    if (carried) row.metered[seq] = addShare(row.metered[seq] ?? { pools: {}, months: {} }, carried);
  }

  /** The settlement to hand to D1 now (a `settle` message asked): what is metered and not settled, if anything. */
  settlement(at: number): Settlement | null {
    return this.#meter.settlement(at, true);
  }

  /**
   * D1 applied settlement `seq` and answered with its figures. Returns the next settlement when usage metered
   * meanwhile already passes a threshold (hand it over at once), else null.
   */
  confirmSettlement(seq: number, figures: MeterFigures, at: number): Settlement | null {
    this.#settleAskedAt = null;
    return this.#meter.confirm(seq, figures, at) ? this.#meter.settlement(at, true) : null;
  }

  /**
   * D1's figures as they changed (a top-up, a cap, a deletion); ignored before the meter starts. A sub-user that
   * gained a cap is metered from its periods as the rollups count them; returns the settlement due at once if a
   * period passes a threshold of its cap (one just set, or lowered below the figure).
   */
  learnFigures(figures: Partial<MeterFigures>, at: number): Settlement | null {
    if (!this.#meter.configured) return null;
    const started = this.#startPeriods(this.#meter.learn(figures), at);
    return started || this.#meter.anyPeriodRises() ? this.#meter.settlement(at, true) : null;
  }

  /**
   * Each sub-user's usage (bytes in + out, all products) in the UTC month and the UTC day of `at`, and in all the
   * store counted (its lifetime): exact for every sub-user, capped or not, and never behind the store's own counts.
   */
  periodUsage(subuserIds: string[], at: number): Record<string, PeriodUsage> {
    const date = new Date(at);
    const monthFrom = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    const dayFrom = at - (at % DAY);
    const ranges = {
      month: [monthFrom, Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)],
      day: [dayFrom, dayFrom + DAY],
      lifetime: [null, Number.POSITIVE_INFINITY],
    } as const;
    const usage: Record<string, PeriodUsage> = Object.fromEntries(
      subuserIds.map((id) => [id, { month: 0, day: 0, lifetime: 0 }]),
    );
    const { bytesIn, bytesOut } = MARGINAL;
    for (const product of products) {
      const before = (t: number | null) =>
        t === null ? new Map<string, Marginal>() : this.#queries.cumulativeBefore(product, "subuser", t, this.#version);
      for (const kind of CAP_KINDS) {
        const [from, to] = ranges[kind];
        const after = before(to);
        const start = before(from);
        for (const id of subuserIds) {
          const a = after.get(id);
          const figures = usage[id];
          if (!a || !figures) continue;
          const b = start.get(id);
          figures[kind] += a[bytesIn] + a[bytesOut] - ((b?.[bytesIn] ?? 0) + (b?.[bytesOut] ?? 0));
        }
      }
    }
    return usage;
  }

  /** Starts metering the periods of sub-users that gained a cap from the rollups; whether one passes a threshold. */
  #startPeriods(subuserIds: string[], at: number): boolean {
    if (subuserIds.length === 0) return false;
    const usage = this.periodUsage(subuserIds, at);
    const periods = periodsAt(at);
    return this.#meter.startPeriods(
      subuserIds.flatMap((subuserId) =>
        CAP_KINDS.map((kind) => ({ subuserId, period: periods[kind], usedBytes: usage[subuserId]?.[kind] ?? 0 })),
      ),
    );
  }

  /** Usage dropped per day: a deleted sub-user's, past its drain. */
  droppedUsage(): Array<{ day: number; records: number; bytes: number }> {
    return this.#meter.dropped();
  }

  /**
   * Sessions as their gates see them: started ones are listed until their usage arrives (memory only); ended ones
   * (terminated) are kept, with their usage, for 24 hours.
   */
  upsertSessions(snapshots: SessionSnapshot[]): void {
    for (const snapshot of snapshots) {
      if (snapshot.status === "terminated") this.#sessions.terminate(snapshot);
      else this.#sessions.announce(snapshot);
    }
  }

  traffic(query: TrafficQuery): TrafficRow[] {
    return this.#queries.traffic(query, this.#version);
  }

  /** A sub-user's client blocks of the last 30 days (`SourceEntry`), newest first seen first. */
  clientSources(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
    at: number,
  ): SourceEntry[] {
    return this.#sources.list(subuserId, after, limit, at);
  }

  /** A sub-user's spike alert setting (it is `medium` until told otherwise). */
  configureSpikes(subuserId: string, setting: SpikeSetting, at: number): void {
    this.#spikes.configure(subuserId, setting, at);
  }

  /** A sub-user's episode acknowledged as normal teaches its baseline (`lesson`), or stops teaching it (null). */
  teachSpikes(subuserId: string, spikeId: string, lesson: Lesson | null): void {
    this.#spikes.teach(subuserId, spikeId, lesson);
  }

  /** The spike alerts not confirmed yet (also for a `settle` message, when no usage brings them). */
  spikeAlerts(): SpikeAlert[] {
    return this.#spikes.alerts();
  }

  /** The caller recorded these spike alerts (or dropped them: the sub-user is off or gone). */
  confirmSpikeAlerts(receipts: SpikeAlertReceipt[]): void {
    this.#spikes.confirm(receipts);
  }

  /** The caller recorded these `subuser.new_source` alerts. */
  confirmSourceAlerts(alerts: SourceAlertReceipt[]): void {
    this.#sources.confirm(alerts);
  }

  requests(query: RequestLogQuery, at: number): RequestSample[] {
    return this.#log.list(query, at);
  }

  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number, at: number): TrafficDayRow[] {
    return this.#reports.trafficDays(scope, cursor, limit, at);
  }

  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
    at: number,
  ): RequestSample[] {
    return this.#log.range(scope, cursor, limit, at);
  }

  reportIpHealth(ips: string[], from: number, to: number, at: number): IpHealth[] {
    return this.#reports.ipHealth(ips, from, to, at, this.#version);
  }

  listSessions(filters: SessionFilters, at: number): SessionSnapshot[] {
    return this.#sessions.list(filters, at);
  }

  session(id: string, at: number): { session: SessionSnapshot; lastRequests: SessionRequest[] } | null {
    return this.#sessions.find(id, at);
  }

  /**
   * The store's periodic work: folds what is due and, hourly, forgets what is past its horizon and snapshots the
   * sources. Returns the account (and shard) whose metered usage should be settled by a `settle` message now (usage
   * stopped arriving with some of it not settled), if any.
   */
  maintain(at: number): { accountId: string; shard: number } | null {
    if (this.#tiers.fold(at, this.#arrivals, (sample, requests) => this.#log.keeps(sample, requests))) this.#version++;
    this.#spikes.judge(this.#tiers, this.#sources);
    if (this.#pruneBy !== null && this.#pruneBy <= at) this.#prune(at);
    const due = this.#meterDue();
    // Spike alerts no ingest took (usage stopped) leave with a `settle` message too: its consumer records them.
    const alertsWait = this.#spikes.alerts().length > 0 && this.#meter.configured;
    if ((due === null || due > at) && !alertsWait) return null;
    this.#settleAskedAt = at;
    return this.#meter.store;
  }

  #prune(at: number): void {
    this.#tiers.prune(at);
    this.#sources.maintain(at);
    this.#sessions.prune(at);
    this.#meter.prune(at);
    const openSeq = String(this.#meter.openSeq);
    // Rows a busy account would have overwritten: folded, holding nothing of the open settlement, sources snapshotted.
    this.#arrivals.deleteWhere(
      (head) =>
        head.minute <= at - ARRIVALS_KEPT_MS &&
        this.#tiers.isFolded(head.lastMinute) &&
        !this.#arrivals.column(head.slot, "metered")[openSeq] &&
        !this.#sources.needsSnapshotBefore(head.minute, this.#arrivals.column(head.slot, "sources").length),
    );
    const holdsData = this.#arrivals.heads().length > 0 || this.#tiers.buckets("1d").length > 1;
    this.#pruneBy = holdsData ? at + PRUNE_INTERVAL_MS : null;
  }

  /** When the store next needs `maintain` (a fold, a prune, a settlement due), or null. */
  nextWake(): number | null {
    const times = [this.#foldDue(), this.#pruneBy, this.#meterDue(), this.#spikeDue()].filter(
      (t): t is number => t !== null,
    );
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** When the oldest usage not folded yet is due to fold. */
  #foldDue(): number | null {
    const watermark = this.#tiers.watermark("5m");
    let oldest: number | null = null;
    for (const head of this.#arrivals.heads()) {
      if (head.lastMinute < watermark) continue;
      const first = Math.max(head.firstMinute, watermark);
      oldest = oldest === null ? first : Math.min(oldest, first);
    }
    if (oldest === null) return null;
    const five = TIERS["5m"].span;
    return floorTo(oldest, five) + five + FOLD_LATENESS_MS;
  }

  /** While an episode is open, buckets fold (empty or not) so that it can end when usage stops. */
  #spikeDue(): number | null {
    if (!this.#spikes.watching()) return null;
    const five = TIERS["5m"].span;
    return this.#tiers.watermark("5m") + five + FOLD_LATENESS_MS;
  }

  #meterDue(): number | null {
    const due = this.#meter.nextCheck();
    if (due === null || this.#settleAskedAt === null) return due;
    return Math.max(due, this.#settleAskedAt + SETTLE_INTERVAL_MS);
  }

  /** The account's requests in a minute (all products): the folded count, or the arrival rows'. */
  #requestsIn(minute: number): number {
    return this.#tiers.requestsIn(minute) ?? this.#arrivals.requestsIn(minute);
  }

  /** A mobile ASN's carrier, written only when new or changed. */
  #learnCarriers(cells: Cell[]): void {
    for (const cell of cells) {
      if (cell.carrier === "" || this.#carriers.get(cell.asn) === cell.carrier) continue;
      this.#carriers.set(cell.asn, cell.carrier);
      this.#sql.exec(
        "INSERT INTO asn_carriers (asn, carrier) VALUES (?, ?) ON CONFLICT DO UPDATE SET carrier = excluded.carrier",
        cell.asn,
        cell.carrier,
      );
    }
  }
}

/**
 * The arrival from which a part's key is looked for: no copy of the part was applied before its batch first
 * arrived, which was no later than this copy's `receivedAt` (a retry after the batch's ledger record failed carries
 * its own, later time) nor than the part's oldest usage less the skew a record may run ahead of its batch.
 */
function lookedForSince(part: StorePart): number {
  const oldest = oldestUsage(part);
  if (part.receivedAt === undefined) return ArrivalRows.legacyReceivedAt(oldest);
  return Math.min(part.receivedAt, oldest - USAGE_CLOCK_SKEW_MS);
}

/** A part's oldest usage, as counted (0 for a part without any: its key is then looked for in every row). */
function oldestUsage(part: StorePart): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const cell of part.cells) oldest = Math.min(oldest, cell.minute);
  for (const cell of part.domains ?? []) oldest = Math.min(oldest, cell.minute);
  for (const source of part.sources ?? []) oldest = Math.min(oldest, source.firstSeen);
  for (const delta of part.sessions ?? []) oldest = Math.min(oldest, delta.usage.firstTs);
  for (const sample of part.samples) oldest = Math.min(oldest, sample.ts);
  return Number.isFinite(oldest) ? oldest : 0;
}

/**
 * A row's sessions with an ingest's added: one entry per session, its usage summed, its earliest start kept (a
 * node-decided session's start moves earlier when late usage shows an earlier first request).
 */
function mergeSessions(known: SessionDelta[], more: SessionDelta[]): SessionDelta[] {
  if (more.length === 0) return known;
  const byId = new Map(known.map((delta) => [delta.id, delta]));
  for (const delta of more) {
    const entry = byId.get(delta.id);
    if (!entry) {
      byId.set(delta.id, { ...delta, usage: copySessionUsage(delta.usage) });
      continue;
    }
    addSessionUsage(entry.usage, delta.usage);
    if (delta.startedAt < entry.startedAt) {
      entry.startedAt = delta.startedAt;
      entry.expiresAt = delta.expiresAt;
    }
  }
  return [...byId.values()];
}
