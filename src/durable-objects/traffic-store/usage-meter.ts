import {
  anyCap,
  CAP_KINDS,
  type CapBytes,
  capKindOf,
  LIFETIME,
  oldestDayKept,
  periodsAt,
} from "../../platform/cap-periods";
import { DAY, MINUTE, utcMonth } from "../../platform/clock";
import { reachesPercent } from "../../platform/units";
import type { BandwidthProduct } from "../../vocabulary";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import type { RowMeter } from "./arrival-rows";
import type { Cell, MeterFigures, SampleCandidate, Settlement } from "./contract";

/**
 * Metered usage is settled to D1 at most this long after it was counted (at once when a threshold is passed):
 * D1's pools and months are this far behind the store at most; caps and exhaustion never wait for it.
 */
export const SETTLE_INTERVAL_MS = 5 * MINUTE;
/** A deleted sub-user's requests still count for this long after the deletion (spec §8.5: in flight, drained). */
export const DRAIN_MS = MINUTE;
/** A settlement handed out and not confirmed is asked for again after this long, if no usage brings it back. */
const SETTLEMENT_RETRY_MS = MINUTE;
/** Days of dropped-usage counts kept. */
const DROPPED_KEPT_MS = 90 * DAY;
/** The shares of a pool or cap whose passing is reported (an event, and the gates at 100%). */
const THRESHOLDS_PERCENT = [80, 100];

/**
 * What is metered and not yet settled: bytes per pool, and capped sub-users' figures (bytes so far, absolute) per
 * cap period (`sub_…|2026-11`, `sub_…|2026-11-28`, `sub_…|lifetime`; held under `months`, as D1's column is named).
 * An ingest's share of it (`RowMeter`) has the same shape: its bytes, and the figures as they stood after it.
 */
type Deltas = RowMeter;

type MeterRow = {
  account_id: string;
  /** The account's shard this store is (0: the account's own store). */
  shard: number;
  prepared: number;
  settled: number;
  prepared_at: number | null;
  settled_at: number | null;
  frozen: string | null;
  carried: string | null;
  /** The pools' figures as D1 last told them (JSON). */
  pools: string | null;
};

/** The meter's storage steps (`migrate`): append, never edit. */
const METER_STORAGE: StorageStep[] = [
  // 1: the tables.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS meter (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL,
        prepared INTEGER NOT NULL, settled INTEGER NOT NULL, prepared_at INTEGER, settled_at INTEGER);
      CREATE TABLE IF NOT EXISTS meter_pools (product TEXT PRIMARY KEY, purchased_bytes INTEGER NOT NULL,
        used_bytes INTEGER NOT NULL, top_up_count INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS meter_subusers (subuser TEXT PRIMARY KEY, cap_bytes INTEGER, deleted_at INTEGER)
        WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS meter_months (subuser TEXT NOT NULL, month TEXT NOT NULL, used_bytes INTEGER NOT NULL,
        PRIMARY KEY (subuser, month)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS meter_deltas (seq INTEGER PRIMARY KEY, pools TEXT NOT NULL, months TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS usage_dropped (day INTEGER PRIMARY KEY, records INTEGER NOT NULL,
        bytes INTEGER NOT NULL);
    `),
  // 2: the open settlement moves to the arrival rows (each ingest's share in the row it writes anyway); the meter
  // row keeps the frozen one, what no row holds (`carried`) and the pools' figures (one row written per settlement
  // step). Stores from before carry their open deltas and pools over.
  (sql) => {
    sql.exec(
      "ALTER TABLE meter ADD COLUMN frozen TEXT; ALTER TABLE meter ADD COLUMN carried TEXT; ALTER TABLE meter ADD COLUMN pools TEXT;",
    );
    const pools = sql
      .exec<{ product: string; purchased_bytes: number; used_bytes: number; top_up_count: number }>(
        "SELECT * FROM meter_pools",
      )
      .toArray()
      .map((r) => ({
        product: r.product,
        purchasedBytes: r.purchased_bytes,
        usedBytes: r.used_bytes,
        topUpCount: r.top_up_count,
      }));
    sql.exec("UPDATE meter SET pools = ?", JSON.stringify(pools));
    sql.exec("DROP TABLE meter_pools");
    const meter = sql.exec<{ prepared: number; settled: number }>("SELECT prepared, settled FROM meter").toArray()[0];
    if (meter) {
      const deltas = (seq: number) =>
        sql
          .exec<{ pools: string; months: string }>("SELECT pools, months FROM meter_deltas WHERE seq = ?", seq)
          .toArray()[0];
      const asJson = (row: { pools: string; months: string } | undefined) =>
        row ? JSON.stringify({ pools: JSON.parse(row.pools), months: JSON.parse(row.months) }) : null;
      sql.exec(
        "UPDATE meter SET frozen = ?, carried = ?",
        meter.prepared > meter.settled ? asJson(deltas(meter.prepared)) : null,
        asJson(deltas(meter.prepared + 1)),
      );
    }
    sql.exec("DROP TABLE meter_deltas");
  },
  // 3: the account's shard the store is (settle messages name it).
  (sql) => sql.exec("ALTER TABLE meter ADD COLUMN shard INTEGER NOT NULL DEFAULT 0"),
  // 4: the daily and lifetime caps beside the monthly one (`cap_bytes`); `meter_months` holds every cap period.
  (sql) =>
    sql.exec(
      "ALTER TABLE meter_subusers ADD COLUMN day_cap_bytes INTEGER; ALTER TABLE meter_subusers ADD COLUMN lifetime_cap_bytes INTEGER;",
    ),
];

type SubuserRow = {
  subuser: string;
  cap_bytes: number | null;
  day_cap_bytes: number | null;
  lifetime_cap_bytes: number | null;
  deleted_at: number | null;
};

/**
 * The account's usage meter, inside its traffic store (SQLite, synchronous): pools' consumption and capped
 * sub-users' usage per cap period, counted in the same step as the rollups, so a usage part that is applied once is
 * metered once.
 *
 * - D1 stays the record of what was bought and of caps. The meter knows the D1 figures as of its last settlement
 *   (`meter_pools`, `meter_months`, `meter_subusers`) and what it metered since: bytes per pool, and the month's,
 *   UTC day's and lifetime figure of each sub-user with any cap (the only ones whose figures D1 keeps: caps are
 *   enforced and reported from there; every sub-user's usage is read from the store's rollups), each judged against
 *   its own cap. What it metered since is not written by the meter: each ingest's share goes into the arrival row
 *   the ingest writes anyway, and `restore` sums them on a restart.
 * - A **settlement** hands the metered bytes to D1, numbered (`seq`): D1 applies each number once, so a settlement
 *   applied twice changes nothing. Until D1 confirms it, the settlement is frozen and handed out unchanged; new
 *   usage goes to the next one.
 * - It is due every `SETTLE_INTERVAL_MS` while usage arrives, and at once when a pool or a capped sub-user passes
 *   80% or 100% (or runs out) by the meter's figures: D1 then records the event and flips the gates, judged on its
 *   own purchased figures, so a top-up the meter has not heard of yet can only make it settle early.
 * - A deleted sub-user's usage counts while its minute began within `DRAIN_MS` of the deletion; later usage is
 *   dropped and counted in `usage_dropped`.
 */
export class UsageMeter {
  readonly #sql: SqlStorage;
  #row: MeterRow | null;
  #open: Deltas;
  /** The settlement handed out and not confirmed yet, as metered (null when none). */
  #frozenDeltas: Deltas | null;
  readonly #pools = new Map<BandwidthProduct, { purchasedBytes: number; usedBytes: number; topUpCount: number }>();
  /** The pools learned figures the meter row does not hold yet (written with the row's next change). */
  #poolsChanged = false;
  readonly #subusers = new Map<string, { caps: CapBytes; deletedAt: number | null }>();
  /** Capped sub-users' figures per period (`sub_…|2026-11`) as D1 last confirmed them. */
  readonly #settled = new Map<string, number>();

  constructor(storage: AreaStorage) {
    const sql = storage.sql;
    this.#sql = sql;
    migrate(storage, "usage_meter", METER_STORAGE);
    this.#row = sql.exec<MeterRow>("SELECT * FROM meter").toArray()[0] ?? null;
    this.#open = this.#row?.carried ? (JSON.parse(this.#row.carried) as Deltas) : emptyDeltas();
    this.#frozenDeltas =
      this.#row?.frozen && this.#row.prepared > this.#row.settled ? (JSON.parse(this.#row.frozen) as Deltas) : null;
    for (const pool of JSON.parse(this.#row?.pools ?? "[]") as MeterFigures["pools"]) {
      const { product, ...figures } = pool;
      this.#pools.set(product, figures);
    }
    for (const r of sql.exec<SubuserRow>("SELECT * FROM meter_subusers")) {
      const caps = { month: r.cap_bytes, day: r.day_cap_bytes, lifetime: r.lifetime_cap_bytes };
      this.#subusers.set(r.subuser, { caps, deletedAt: r.deleted_at });
    }
    for (const r of sql.exec<{ subuser: string; month: string; used_bytes: number }>("SELECT * FROM meter_months")) {
      this.#settled.set(`${r.subuser}|${r.month}`, r.used_bytes);
    }
  }

  /** The number of the settlement that usage metered now goes to. */
  get openSeq(): number {
    return (this.#row?.prepared ?? 0) + 1;
  }

  /**
   * The open settlement as the arrival rows hold it (each row's share per settlement number): bytes add up, a
   * period's figure is the highest any row saw. Called once, after the rows are read.
   */
  restore(rows: Iterable<Record<string, RowMeter>>): void {
    const seq = String(this.openSeq);
    for (const metered of rows) {
      const share = metered[seq];
      if (share) addShare(this.#open, share);
    }
  }

  /** Whether the meter was given the account's figures (it meters nothing before). */
  get configured(): boolean {
    return this.#row !== null;
  }

  /** The account metered and the shard of it this store is (known once configured). */
  get store(): { accountId: string; shard: number } | null {
    return this.#row ? { accountId: this.#row.account_id, shard: this.#row.shard } : null;
  }

  /**
   * Starts metering from D1's figures (once; a second start, from a racing call, changes nothing). Returns the
   * capped sub-users, whose periods `startPeriods` gives.
   */
  configure(accountId: string, shard: number, figures: MeterFigures): string[] {
    if (this.#row) return [];
    this.#row = {
      account_id: accountId,
      shard,
      prepared: 0,
      settled: 0,
      prepared_at: null,
      settled_at: null,
      frozen: null,
      carried: null,
      pools: null,
    };
    this.#sql.exec(
      "INSERT INTO meter (id, account_id, shard, prepared, settled) VALUES (1, ?, ?, 0, 0)",
      accountId,
      shard,
    );
    const newlyCapped = this.learn(figures);
    this.#saveRow({});
    return newlyCapped;
  }

  /**
   * D1's figures, in full or in part: pools' and periods' figures only grow, so the higher of the known and the
   * told one is kept (a late message cannot undo a newer one); caps are replaced, a deletion kept. Returns the
   * sub-users that gained a cap (of any kind): their periods are metered from now on, from the figures
   * `startPeriods` gives (a period metered already keeps the higher figure).
   * A figure already known is not written again (every confirmed settlement hands back all of them, and a
   * Durable Object bills each row written).
   */
  learn(figures: Partial<MeterFigures>): string[] {
    const newlyCapped = this.#learn(figures);
    if (this.#poolsChanged && this.#row) this.#saveRow({});
    return newlyCapped;
  }

  #learn(figures: Partial<MeterFigures>): string[] {
    const newlyCapped: string[] = [];
    for (const pool of figures.pools ?? []) {
      const known = this.#pools.get(pool.product);
      const merged = {
        purchasedBytes: Math.max(known?.purchasedBytes ?? 0, pool.purchasedBytes),
        usedBytes: Math.max(known?.usedBytes ?? 0, pool.usedBytes),
        topUpCount: Math.max(known?.topUpCount ?? 0, pool.topUpCount),
      };
      if (
        known?.purchasedBytes === merged.purchasedBytes &&
        known.usedBytes === merged.usedBytes &&
        known.topUpCount === merged.topUpCount
      ) {
        continue;
      }
      this.#pools.set(pool.product, merged);
      this.#poolsChanged = true;
    }
    for (const subuser of figures.subusers ?? []) {
      const known = this.#subusers.get(subuser.subuserId);
      const deletedAt = known?.deletedAt ?? subuser.deletedAt;
      const { caps } = subuser;
      if (!anyCap(caps) && deletedAt === null) {
        // Neither capped nor deleted: nothing to meter it against.
        if (!known) continue;
        this.#subusers.delete(subuser.subuserId);
        this.#sql.exec("DELETE FROM meter_subusers WHERE subuser = ?", subuser.subuserId);
        continue;
      }
      if (known?.deletedAt === deletedAt && sameCaps(known.caps, caps)) continue;
      if (CAP_KINDS.some((kind) => caps[kind] !== null && (known?.caps[kind] ?? null) === null)) {
        newlyCapped.push(subuser.subuserId);
      }
      this.#subusers.set(subuser.subuserId, { caps: { ...caps }, deletedAt });
      this.#sql.exec(
        `INSERT OR REPLACE INTO meter_subusers (subuser, cap_bytes, day_cap_bytes, lifetime_cap_bytes, deleted_at)
         VALUES (?, ?, ?, ?, ?)`,
        subuser.subuserId,
        caps.month,
        caps.day,
        caps.lifetime,
        deletedAt,
      );
    }
    for (const month of figures.months ?? []) {
      if (!this.#capped(month.subuserId)) continue;
      const key = `${month.subuserId}|${month.month}`;
      const knownBytes = this.#settled.get(key);
      const usedBytes = Math.max(knownBytes ?? 0, month.usedBytes);
      if (knownBytes === usedBytes) continue;
      this.#settled.set(key, usedBytes);
      this.#sql.exec(
        "INSERT OR REPLACE INTO meter_months (subuser, month, used_bytes) VALUES (?, ?, ?)",
        month.subuserId,
        month.month,
        usedBytes,
      );
    }
    return newlyCapped;
  }

  #capped(subuserId: string): boolean {
    const subuser = this.#subusers.get(subuserId);
    return subuser !== undefined && anyCap(subuser.caps);
  }

  /**
   * Capped sub-users' periods as the store's rollups count them (when a cap is set, or the meter starts): each
   * figure to settle is at least that (one row written for all of them). Returns whether one passes a threshold of
   * its cap (settle at once).
   */
  startPeriods(figures: Array<{ subuserId: string; period: string; usedBytes: number }>): boolean {
    const keys = figures
      .filter(({ subuserId, period, usedBytes }) => usedBytes > this.#figure(`${subuserId}|${period}`))
      .map(({ subuserId, period, usedBytes }) => {
        const key = `${subuserId}|${period}`;
        this.#open.months[key] = usedBytes;
        return key;
      });
    if (keys.length === 0) return false;
    const carried = this.#row?.carried ? (JSON.parse(this.#row.carried) as Deltas) : emptyDeltas();
    for (const key of keys) carried.months[key] = this.#open.months[key] as number;
    this.#saveRow({ carried: JSON.stringify(carried) });
    return this.#rises([], keys);
  }
  /**
   * The cells and samples that count: a deleted sub-user's count while their minute began within `DRAIN_MS` of
   * the deletion. The rest is dropped and counted per day.
   */
  admit(cells: Cell[], samples: SampleCandidate[], at: number): { cells: Cell[]; samples: SampleCandidate[] } {
    const drained = (subuserId: string, minute: number) => this.#drained(subuserId, minute);
    const kept = cells.filter((cell) => !drained(cell.subuserId, cell.minute));
    if (kept.length === cells.length) return { cells, samples };
    const dropped = cells.filter((cell) => drained(cell.subuserId, cell.minute));
    const day = at - (at % DAY);
    this.#sql.exec(
      `INSERT INTO usage_dropped (day, records, bytes) VALUES (?, ?, ?)
       ON CONFLICT DO UPDATE SET records = records + excluded.records, bytes = bytes + excluded.bytes`,
      day,
      dropped.reduce((sum, cell) => sum + cell.requests, 0),
      dropped.reduce((sum, cell) => sum + cell.bytesIn + cell.bytesOut, 0),
    );
    return {
      cells: kept,
      samples: samples.filter((sample) => !drained(sample.subuserId, sample.ts - (sample.ts % MINUTE))),
    };
  }

  /** Items of sub-users still counted at their minute (as `admit` keeps cells; the drop is counted by it). */
  admitted<T extends { subuserId: string }>(items: T[], timeOf: (item: T) => number): T[] {
    return items.filter((item) => !this.#drained(item.subuserId, timeOf(item)));
  }

  #drained(subuserId: string, minute: number): boolean {
    const deletedAt = this.#subusers.get(subuserId)?.deletedAt;
    return deletedAt != null && minute > deletedAt + DRAIN_MS;
  }

  /**
   * Meters cells: bytes in + out consume the pool of their product (ISP has none) and a capped sub-user's month,
   * UTC day and lifetime (a period no longer kept at `at`, usage reported days late, is left out). Returns the
   * ingest's share (for the row it writes: the meter writes nothing itself) and whether a pool or a capped sub-user
   * passed a threshold by the meter's figures (settle at once).
   */
  meter(cells: Cell[], at: number): { share: RowMeter | null; rises: boolean } {
    const share: RowMeter = { pools: {}, months: {} };
    for (const cell of cells) {
      const bytes = cell.bytesIn + cell.bytesOut;
      if (bytes === 0) continue;
      if (cell.product !== "isp") {
        this.#open.pools[cell.product] = (this.#open.pools[cell.product] ?? 0) + bytes;
        share.pools[cell.product] = (share.pools[cell.product] ?? 0) + bytes;
      }
      if (!this.#capped(cell.subuserId)) continue;
      for (const period of Object.values(periodsAt(cell.minute))) {
        if (!periodKept(period, at)) continue;
        const key = `${cell.subuserId}|${period}`;
        this.#open.months[key] = this.#figure(key) + bytes;
        share.months[key] = this.#open.months[key];
      }
    }
    const pools = Object.keys(share.pools) as BandwidthProduct[];
    const months = Object.keys(share.months);
    if (pools.length + months.length === 0) return { share: null, rises: false };
    return { share, rises: this.#rises(pools, months) };
  }

  /** A capped sub-user's figure of a period as metered: the open one, else the one handed out, else D1's. */
  #figure(key: string): number {
    return this.#open.months[key] ?? this.#frozenDeltas?.months[key] ?? this.#settled.get(key) ?? 0;
  }

  /** Whether what is metered and not settled takes one of these pools or capped periods past a threshold. */
  #rises(pools: Iterable<BandwidthProduct>, periods: Iterable<string>): boolean {
    const frozen = this.#frozenDeltas;
    for (const product of pools) {
      const pool = this.#pools.get(product);
      const unsettled = (this.#open.pools[product] ?? 0) + (frozen?.pools[product] ?? 0);
      if (pool && rises(pool.usedBytes, pool.usedBytes + unsettled, pool.purchasedBytes)) return true;
    }
    for (const key of periods) if (this.#periodRises(key)) return true;
    return false;
  }

  /** Whether any capped period not settled passes a threshold (a cap just lowered below it, say). */
  anyPeriodRises(): boolean {
    return Object.keys(this.#open.months).some((key) => this.#periodRises(key));
  }

  /** Whether a capped period as metered passes a threshold of its own cap that D1's figure has not. */
  #periodRises(key: string): boolean {
    const separator = key.indexOf("|");
    const caps = this.#subusers.get(key.slice(0, separator))?.caps;
    const capBytes = caps?.[capKindOf(key.slice(separator + 1))];
    return capBytes != null && rises(this.#settled.get(key) ?? 0, this.#figure(key), capBytes);
  }

  /**
   * The settlement to hand to D1 now, or null: one handed out and not confirmed yet (the same, unchanged: its
   * consumer may have died, and D1 applies a number once), else the usage metered since the last one when `now`
   * is true, the interval has passed, or nothing was ever settled.
   */
  settlement(at: number, now: boolean): Settlement | null {
    const row = this.#row;
    if (!row) return null;
    if (row.prepared > row.settled) return this.#settlementOf(row.prepared);
    const rising = Object.keys(this.#open.months).filter((key) => this.#periodRises(key));
    if (Object.keys(this.#open.pools).length === 0 && rising.length === 0) return null;
    const due = now || row.settled_at === null || row.settled_at + SETTLE_INTERVAL_MS <= at;
    if (!due) return null;
    // Capped periods go to D1 when they pass a threshold of their cap (caps are enforced and announced from there);
    // until then they stay open, and the store answers sub-users' usage itself.
    const retained = Object.fromEntries(Object.entries(this.#open.months).filter(([key]) => !rising.includes(key)));
    this.#frozenDeltas = {
      pools: this.#open.pools,
      months: Object.fromEntries(rising.map((key) => [key, this.#open.months[key] as number])),
    };
    this.#open = { pools: {}, months: retained };
    this.#saveRow({
      prepared: row.prepared + 1,
      prepared_at: at,
      frozen: JSON.stringify(this.#frozenDeltas),
      carried: Object.keys(retained).length > 0 ? JSON.stringify(this.#open) : null,
    });
    return this.#settlementOf(row.prepared);
  }

  /**
   * D1 applied settlement `seq`: its bytes are in D1's figures, which the answer brings. Returns whether what was
   * metered meanwhile already passes a threshold by the new figures (settle again at once).
   */
  confirm(seq: number, figures: MeterFigures, at: number): boolean {
    const row = this.#row;
    if (!row || seq !== row.prepared || seq <= row.settled) return false;
    this.#frozenDeltas = null;
    this.#learn(figures);
    this.#saveRow({ settled: seq, settled_at: at, frozen: null });
    return this.#rises(Object.keys(this.#open.pools) as BandwidthProduct[], Object.keys(this.#open.months));
  }

  /** When the meter next needs a look (a settlement due by time), or null when nothing waits. */
  nextCheck(): number | null {
    const row = this.#row;
    if (!row) return null;
    if (row.prepared > row.settled) return (row.prepared_at ?? 0) + SETTLEMENT_RETRY_MS;
    // Open periods wait for a threshold: only pools are settled by time.
    if (Object.keys(this.#open.pools).length === 0) return null;
    return (row.settled_at ?? 0) + SETTLE_INTERVAL_MS;
  }

  /** Usage dropped per day (a deleted sub-user's, past its drain), oldest first. */
  dropped(): Array<{ day: number; records: number; bytes: number }> {
    return this.#sql
      .exec<{ day: number; records: number; bytes: number }>("SELECT * FROM usage_dropped ORDER BY day")
      .toArray();
  }

  /**
   * Forgets dropped-usage counts after 90 days, and capped sub-users' figures of periods no longer kept (days
   * after `DAYS_KEPT`, months before the previous one) or not settled of sub-users deleted past their drain: their
   * caps refuse nothing any more.
   */
  prune(at: number): void {
    this.#sql.exec("DELETE FROM usage_dropped WHERE day < ?", at - DROPPED_KEPT_MS);
    const stale = (key: string) => !periodKept(key.slice(key.indexOf("|") + 1), at);
    for (const key of Object.keys(this.#open.months)) {
      if (this.#drained(key.slice(0, key.indexOf("|")), at) && !this.#periodRises(key)) delete this.#open.months[key];
    }
    for (const key of Object.keys(this.#open.months)) {
      if (stale(key) && !this.#periodRises(key)) delete this.#open.months[key];
    }
    const forgotten = [...this.#settled.keys()].filter(stale);
    for (const key of forgotten) this.#settled.delete(key);
    if (forgotten.length === 0) return;
    this.#sql.exec(
      `DELETE FROM meter_months WHERE (length(month) = 10 AND month < ?) OR (length(month) = 7 AND month < ?)`,
      oldestDayKept(at),
      oldestMonthKept(at),
    );
  }

  #settlementOf(seq: number): Settlement {
    const deltas = seq === this.#row?.prepared ? (this.#frozenDeltas ?? emptyDeltas()) : emptyDeltas();
    return {
      seq,
      pools: Object.entries(deltas.pools).map(([product, bytes]) => ({ product: product as BandwidthProduct, bytes })),
      months: Object.entries(deltas.months).map(([key, usedBytes]) => {
        const [subuserId = "", month = ""] = key.split("|");
        return { subuserId, month, usedBytes };
      }),
    };
  }

  /** The meter row's changed columns: one row written per settlement step. */
  #saveRow(changes: Partial<MeterRow>): void {
    const row = Object.assign(this.#row as MeterRow, changes);
    row.pools = JSON.stringify([...this.#pools].map(([product, figures]) => ({ product, ...figures })));
    this.#poolsChanged = false;
    this.#sql.exec(
      "UPDATE meter SET prepared = ?, settled = ?, prepared_at = ?, settled_at = ?, frozen = ?, carried = ?, pools = ?",
      row.prepared,
      row.settled,
      row.prepared_at,
      row.settled_at,
      row.frozen,
      row.carried,
      row.pools,
    );
  }
}

/** Adds an ingest's share to deltas: bytes add up, a month's figure is the highest. */
export function addShare(deltas: Deltas, share: RowMeter): Deltas {
  for (const [product, bytes] of Object.entries(share.pools) as Array<[BandwidthProduct, number]>) {
    deltas.pools[product] = (deltas.pools[product] ?? 0) + bytes;
  }
  for (const [key, figure] of Object.entries(share.months))
    deltas.months[key] = Math.max(deltas.months[key] ?? 0, figure);
  return deltas;
}

function emptyDeltas(): Deltas {
  return { pools: {}, months: {} };
}

function sameCaps(a: CapBytes, b: CapBytes): boolean {
  return a.month === b.month && a.day === b.day && a.lifetime === b.lifetime;
}

/** The previous UTC month of `at`'s: a month's figure is kept while late usage may still come for it. */
function oldestMonthKept(at: number): string {
  const date = new Date(at);
  return utcMonth(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1));
}

/** Whether a period's figure is still kept at `at` (the lifetime always). */
function periodKept(period: string, at: number): boolean {
  const kind = capKindOf(period);
  if (kind === "day") return period >= oldestDayKept(at);
  if (kind === "month") return period >= oldestMonthKept(at);
  return period === LIFETIME;
}

/** Whether usage passes a threshold of `size` (or reaches it) that the settled figure had not. */
function rises(settledBytes: number, meteredBytes: number, size: number): boolean {
  if (size <= 0 || meteredBytes <= settledBytes) return false;
  return level(meteredBytes, size) > level(settledBytes, size);
}

function level(usedBytes: number, size: number): number {
  return THRESHOLDS_PERCENT.filter((percent) => reachesPercent(usedBytes, size, percent)).length;
}
