import { DAY, HOUR, MINUTE } from "../../platform/clock";
import { type ArrivalRows, LOGGED_SAMPLE, type LoggedSample } from "./arrival-rows";
import { packJson, unpackJson } from "./blob-codec";
import { BoundedCache } from "./bounded-cache";
import { CELL, type CellRow, type TrafficProduct } from "./contract";
import {
  addCellsToMarginals,
  addSums,
  boundDomains,
  DOMAIN_SUMS,
  type DomainSums,
  type Marginals,
  MINUTE_TOTAL,
  type MinuteTotal,
  mergeTotals,
  minuteTotals,
  type Sums,
  sumCells,
  zeroSums,
} from "./summary";

export type TierName = "5m" | "1h" | "1d";

/** Each folded tier: its bucket, and how many buckets its ring of slots keeps (14 days + 1 hour, 92 days, 401 days). */
export const TIERS: Record<TierName, { span: number; slots: number }> = {
  "5m": { span: 5 * MINUTE, slots: (14 * DAY + HOUR) / (5 * MINUTE) },
  "1h": { span: HOUR, slots: 92 * 24 },
  "1d": { span: DAY, slots: 401 },
};
/** A 5-minute bucket is folded this long after it ends: usage arriving later is added to the folded rows. */
export const FOLD_LATENESS_MS = 2 * MINUTE;
/** The request log keeps 48 hours (spec §8.5); samples older than that are never kept. */
export const REQUEST_LOG_KEPT_MS = 48 * HOUR;

export type CumulativeTotals = Partial<Record<TrafficProduct, Sums>>;

export interface BucketHead {
  slot: number;
  bucket: number;
  /** 5 m: per minute and product (the request log's sampling rate); 1 h and 1 d: per product. */
  totals: MinuteTotal[];
  /** 1 h and 1 d: per product, everything before the bucket's end. */
  cumTotals: CumulativeTotals | null;
}

export interface BucketContent {
  cells: CellRow[];
  domains: DomainSums[];
}

/** What arrived for buckets already folded: added to their rows (and the cumulative series after them). */
export interface LateUsage {
  cells: CellRow[];
  domains: DomainSums[];
  samples: LoggedSample[];
}

export const BUCKET_TABLES = `
  CREATE TABLE IF NOT EXISTS bucket_5m (slot INTEGER PRIMARY KEY, bucket INTEGER NOT NULL, totals TEXT NOT NULL,
    samples BLOB, body BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS bucket_1h (slot INTEGER PRIMARY KEY, bucket INTEGER NOT NULL, totals TEXT NOT NULL,
    cum_totals TEXT NOT NULL, body BLOB NOT NULL, cum BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS bucket_1d (slot INTEGER PRIMARY KEY, bucket INTEGER NOT NULL, totals TEXT NOT NULL,
    cum_totals TEXT NOT NULL, body BLOB NOT NULL, cum BLOB NOT NULL);`;

/** Decoded buckets kept in memory, by the rows they hold (~200 bytes each): a few MB whatever the account's size. */
const CACHED_CONTENT_ROWS = 40_000;
const CACHED_SERIES_VALUES = 40_000;

/**
 * The folded tiers of one account: a row per 5-minute bucket, hour and day, each written once when its bucket
 * closes (and again only for usage that arrives after that). Hours and days also carry the cumulative series: per
 * product, dimension and value, everything before the bucket's end, so a total over any long range is a difference
 * of two rows. Rows sit in rings of slots and age out by being overwritten; heads live in memory.
 */
export class FoldedTiers {
  readonly #sql: SqlStorage;
  readonly #heads: Record<TierName, Map<number, BucketHead>> = { "5m": new Map(), "1h": new Map(), "1d": new Map() };
  /** The bucket each slot of a tier's ring holds. */
  readonly #slots: Record<TierName, Map<number, number>> = { "5m": new Map(), "1h": new Map(), "1d": new Map() };
  readonly #sorted: Partial<Record<TierName, number[]>> = {};
  /** Every bucket before the watermark is folded: its row, or none when it had no usage. */
  readonly #watermark: Record<TierName, number> = { "5m": 0, "1h": 0, "1d": 0 };
  readonly #contents = new BoundedCache<string, BucketContent>(
    CACHED_CONTENT_ROWS,
    (content) => content.cells.length + content.domains.length,
  );
  readonly #cums = new BoundedCache<string, Marginals>(CACHED_SERIES_VALUES, seriesValues);

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    for (const tier of Object.keys(TIERS) as TierName[]) {
      const cum = tier === "5m" ? "NULL" : "cum_totals";
      for (const row of sql.exec<{ slot: number; bucket: number; totals: string; cum_totals: string | null }>(
        `SELECT slot, bucket, totals, ${cum} AS cum_totals FROM bucket_${tier}`,
      )) {
        this.#remember(tier, {
          slot: row.slot,
          bucket: row.bucket,
          totals: JSON.parse(row.totals) as MinuteTotal[],
          cumTotals: row.cum_totals === null ? null : (JSON.parse(row.cum_totals) as CumulativeTotals),
        });
        this.#watermark[tier] = Math.max(this.#watermark[tier], row.bucket + TIERS[tier].span);
      }
    }
    // A watermark is where the newest row of its tier ends, or of a coarser one: every usage folded before it is in
    // a row of some tier, so nothing between that and the watermark of before (its last buckets empty, or 5-minute
    // rows pruned past their 14 days) was folded, and folding it again from the arrival rows replaces no usage.
    this.#watermark["1h"] = Math.max(this.#watermark["1h"], this.#watermark["1d"]);
    this.#watermark["5m"] = Math.max(this.#watermark["5m"], this.#watermark["1h"]);
  }

  watermark(tier: TierName): number {
    return this.#watermark[tier];
  }

  head(tier: TierName, bucket: number): BucketHead | undefined {
    return this.#heads[tier].get(bucket);
  }

  /** The buckets of a tier that have rows, oldest first. */
  buckets(tier: TierName): number[] {
    let sorted = this.#sorted[tier];
    if (!sorted) {
      sorted = [...this.#heads[tier].keys()].sort((a, b) => a - b);
      this.#sorted[tier] = sorted;
    }
    return sorted;
  }

  content(tier: TierName, bucket: number): BucketContent {
    const key = `${tier}:${bucket}`;
    let content = this.#contents.get(key);
    if (!content) {
      const head = this.#heads[tier].get(bucket);
      const body = head
        ? this.#sql.exec<{ body: ArrayBuffer }>(`SELECT body FROM bucket_${tier} WHERE slot = ?`, head.slot).one().body
        : null;
      content = unpackJson<BucketContent>(body, { cells: [], domains: [] });
      this.#contents.set(key, content);
    }
    return content;
  }

  /** The cumulative series at the end of an hour or day row. */
  cumulative(tier: "1h" | "1d", bucket: number): Marginals {
    const key = `${tier}:${bucket}`;
    let cum = this.#cums.get(key);
    if (!cum) {
      const head = this.#heads[tier].get(bucket);
      const blob = head
        ? this.#sql.exec<{ cum: ArrayBuffer }>(`SELECT cum FROM bucket_${tier} WHERE slot = ?`, head.slot).one().cum
        : null;
      cum = unpackJson<Marginals>(blob, {});
      this.#cums.set(key, cum);
    }
    return cum;
  }

  /** The request-log candidates kept with a folded 5-minute bucket (they outlive the arrival rows: 48 hours). */
  samples(bucket: number): LoggedSample[] {
    const head = this.#heads["5m"].get(bucket);
    if (!head) return [];
    const blob = this.#sql
      .exec<{ samples: ArrayBuffer | null }>("SELECT samples FROM bucket_5m WHERE slot = ?", head.slot)
      .one().samples;
    return unpackJson<LoggedSample[]>(blob, []);
  }

  /** The account's requests in a minute, once its 5-minute bucket is folded (null before). */
  requestsIn(minute: number): number | null {
    const bucket = minute - (minute % TIERS["5m"].span);
    if (bucket >= this.#watermark["5m"]) return null;
    let requests = 0;
    for (const total of this.#heads["5m"].get(bucket)?.totals ?? []) {
      if (total[MINUTE_TOTAL.minute] === minute) requests += total[MINUTE_TOTAL.requests];
    }
    return requests;
  }

  /**
   * The latest hour or day row whose end is at or before `t`: where the cumulative series is read for a boundary at
   * `t` (a row exists only once its bucket is folded). Null when there is none.
   */
  cumulativeBase(t: number): { tier: "1h" | "1d"; bucket: number; end: number } | null {
    const hour = latestEndingBy(this.buckets("1h"), HOUR, t);
    const day = latestEndingBy(this.buckets("1d"), DAY, t);
    if (hour === null && day === null) return null;
    const hourEnd = hour === null ? -1 : hour + HOUR;
    const dayEnd = day === null ? -1 : day + DAY;
    return hourEnd >= dayEnd
      ? { tier: "1h", bucket: hour as number, end: hourEnd }
      : { tier: "1d", bucket: day as number, end: dayEnd };
  }

  /**
   * Folds every bucket that is due at `at`: 5-minute buckets `FOLD_LATENESS_MS` after they end (from the arrival
   * rows), hours once their 5-minute buckets are folded, days once their hours are. `keepSample` thins a folded
   * bucket's request-log candidates by its minutes' final counts.
   */
  fold(at: number, arrivals: ArrivalRows, keepSample: (sample: LoggedSample, requests: number) => boolean): boolean {
    const due = floorTo(at - FOLD_LATENESS_MS, TIERS["5m"].span);
    if (due <= this.#watermark["5m"]) return false;
    const fresh = this.#unfolded(due, arrivals, at);
    const hoursDue = floorTo(due, HOUR);
    // Hours with new 5-minute buckets, or with buckets folded before but not their hour yet.
    const hours = new Set([...fresh.keys()].map((bucket) => floorTo(bucket, HOUR)));
    for (const bucket of this.buckets("5m")) if (bucket >= this.#watermark["1h"]) hours.add(floorTo(bucket, HOUR));
    const days = new Set<number>();
    for (const bucket of this.buckets("1h")) if (bucket >= this.#watermark["1d"]) days.add(floorTo(bucket, DAY));
    const ordered = [...hours].sort((a, b) => a - b);
    // In time order, each hour as soon as its buckets are written and each day as soon as its hours are: a ring
    // slot reused by a bucket a ring's length later (a backfill of weeks) is folded into its hour before that.
    for (const [i, hour] of ordered.entries()) {
      for (let bucket = hour; bucket < hour + HOUR; bucket += TIERS["5m"].span) {
        const usage = fresh.get(bucket);
        if (usage) this.#write5mFrom(bucket, usage, keepSample);
      }
      if (hour + HOUR > hoursDue) continue;
      this.#foldHour(hour);
      days.add(floorTo(hour, DAY));
      const next = ordered[i + 1];
      const day = floorTo(hour, DAY);
      if (day + DAY <= hoursDue && (next === undefined || floorTo(next, DAY) !== day)) {
        this.#foldDay(day);
        days.delete(day);
      }
    }
    for (const day of [...days].sort((a, b) => a - b)) if (day + DAY <= hoursDue) this.#foldDay(day);
    this.#watermark["5m"] = due;
    this.#watermark["1h"] = Math.max(this.#watermark["1h"], hoursDue);
    this.#watermark["1d"] = Math.max(this.#watermark["1d"], floorTo(hoursDue, DAY));
    return true;
  }

  /** Whether usage with record time `minute` belongs to a bucket already folded (it is late). */
  isFolded(minute: number): boolean {
    return minute < this.#watermark["5m"];
  }

  /**
   * Adds usage that arrived after its buckets were folded: to the 5-minute rows, and, where they are folded too, to
   * the hour and day rows and to the cumulative series of every hour and day row from the late usage on. A bucket
   * past its tier's ring (more than 14 days + 1 hour ago for 5 minutes, 92 days for hours) gets no new row there: its
   * usage is in the coarser rows, and its slot may hold a newer bucket, which the row would overwrite.
   */
  patch(late: LateUsage, at: number): void {
    const five = TIERS["5m"].span;
    const byBucket = Map.groupBy(late.cells, (cell) => floorTo(cell[CELL.minute], five));
    const domainsByBucket = Map.groupBy(late.domains, (row) => floorTo(row[DOMAIN_SUMS.minute], five));
    const samplesByBucket = Map.groupBy(
      late.samples.filter((sample) => sample[LOGGED_SAMPLE.ts] > at - REQUEST_LOG_KEPT_MS),
      (sample) => floorTo(sample[LOGGED_SAMPLE.ts], five),
    );
    const buckets = new Set([...byBucket.keys(), ...domainsByBucket.keys(), ...samplesByBucket.keys()]);
    for (const bucket of buckets) {
      if (!this.#keeps("5m", bucket, at)) continue;
      const content = this.content("5m", bucket);
      const cells = byBucket.get(bucket) ?? [];
      const head = this.#heads["5m"].get(bucket);
      this.#write5m(
        bucket,
        {
          cells: sumCells([...content.cells, ...cells], () => bucket),
          domains: boundDomains([...content.domains, ...(domainsByBucket.get(bucket) ?? [])], () => bucket),
        },
        mergeTotals(
          (head?.totals ?? []).map((t) => [...t] as MinuteTotal),
          minuteTotals(cells),
        ),
        [...this.samples(bucket), ...(samplesByBucket.get(bucket) ?? [])],
      );
    }
    this.#patchCoarse("1h", late, at);
    this.#patchCoarse("1d", late, at);
  }

  /**
   * Writes a bucket's row as given (the layout step converting a store of the earlier layout, oldest first: days,
   * then hours, then 5-minute buckets), continuing the cumulative series from the latest row before it.
   */
  load(tier: TierName, bucket: number, content: BucketContent, samples: LoggedSample[] = []): void {
    if (tier === "5m") this.#write5m(bucket, content, minuteTotals(content.cells), samples);
    else this.#writeCoarse(tier, bucket, content, this.#extend(this.cumulativeBase(bucket), content.cells));
    this.#watermark[tier] = Math.max(this.#watermark[tier], bucket + TIERS[tier].span);
  }

  /** Forgets rows past their tier's horizon that no later bucket overwrote (the newest hour and day stay). */
  prune(at: number): void {
    for (const tier of Object.keys(TIERS) as TierName[]) {
      const { span, slots } = TIERS[tier];
      const buckets = this.buckets(tier);
      const newest = buckets[buckets.length - 1];
      for (const bucket of buckets) {
        if (bucket + slots * span > at || (tier !== "5m" && bucket === newest)) continue;
        const head = this.#heads[tier].get(bucket) as BucketHead;
        this.#sql.exec(`DELETE FROM bucket_${tier} WHERE slot = ?`, head.slot);
        this.#forget(tier, bucket);
      }
    }
  }

  /** Usage not folded yet (record time from the watermark to `due`), by 5-minute bucket: one pass over the rows. */
  #unfolded(due: number, arrivals: ArrivalRows, at: number): Map<number, LateUsage> {
    const five = TIERS["5m"].span;
    const from = this.#watermark["5m"];
    const byBucket = new Map<number, LateUsage>();
    const usageOf = (t: number) => {
      const bucket = floorTo(t, five);
      let usage = byBucket.get(bucket);
      if (!usage) {
        usage = { cells: [], domains: [], samples: [] };
        byBucket.set(bucket, usage);
      }
      return usage;
    };
    const pending = (t: number) => t >= from && t < due;
    for (const head of arrivals.overlapping(from, due)) {
      const row = arrivals.read(head.slot);
      for (const cell of row.content.cells) {
        const minute = cell[CELL.minute];
        if (pending(minute)) usageOf(minute).cells.push(cell);
      }
      for (const domain of row.content.domains) {
        const minute = domain[DOMAIN_SUMS.minute];
        if (pending(minute)) usageOf(minute).domains.push(domain);
      }
      for (const sample of row.samples) {
        const ts = sample[LOGGED_SAMPLE.ts];
        if (pending(ts) && ts > at - REQUEST_LOG_KEPT_MS) usageOf(ts).samples.push(sample);
      }
    }
    return byBucket;
  }

  /** A 5-minute bucket's row from its usage; its candidates thinned by its minutes' final counts. */
  #write5mFrom(
    bucket: number,
    usage: LateUsage,
    keepSample: (sample: LoggedSample, requests: number) => boolean,
  ): void {
    const totals = minuteTotals(usage.cells);
    const perMinute = new Map<number, number>();
    for (const total of totals) {
      const minute = total[MINUTE_TOTAL.minute];
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + total[MINUTE_TOTAL.requests]);
    }
    this.#write5m(
      bucket,
      { cells: sumCells(usage.cells, () => bucket), domains: boundDomains(usage.domains, () => bucket) },
      totals,
      usage.samples.filter((sample) =>
        keepSample(sample, perMinute.get(floorTo(sample[LOGGED_SAMPLE.ts], MINUTE)) ?? 0),
      ),
    );
  }

  #foldHour(hour: number): void {
    const children = this.#children("5m", hour, hour + HOUR);
    const cells = sumCells(
      children.flatMap((bucket) => this.content("5m", bucket).cells),
      () => hour,
    );
    const domains = boundDomains(
      children.flatMap((bucket) => this.content("5m", bucket).domains),
      () => hour,
    );
    const base = this.cumulativeBase(hour);
    this.#writeCoarse("1h", hour, { cells, domains }, this.#extend(base, cells));
  }

  #foldDay(day: number): void {
    const children = this.#children("1h", day, day + DAY);
    const cells = sumCells(
      children.flatMap((bucket) => this.content("1h", bucket).cells),
      () => day,
    );
    const domains = boundDomains(
      children.flatMap((bucket) => this.content("1h", bucket).domains),
      () => day,
    );
    // The day ends where its last hour with usage ends: the series there is the hour's.
    const last = children[children.length - 1] as number;
    const cum = {
      marginals: structuredClone(this.cumulative("1h", last)),
      totals: { ...(this.#heads["1h"].get(last)?.cumTotals ?? {}) },
    };
    this.#writeCoarse("1d", day, { cells, domains }, cum);
  }

  /** The cumulative series after `cells`: the base's, plus them. */
  #extend(
    base: { tier: "1h" | "1d"; bucket: number } | null,
    cells: CellRow[],
  ): { marginals: Marginals; totals: CumulativeTotals } {
    const marginals = base ? structuredClone(this.cumulative(base.tier, base.bucket)) : {};
    const totals: CumulativeTotals = {};
    for (const [product, sums] of Object.entries(
      base ? (this.#heads[base.tier].get(base.bucket)?.cumTotals ?? {}) : {},
    )) {
      totals[product as TrafficProduct] = [...(sums as Sums)] as Sums;
    }
    addCellsToMarginals(marginals, cells);
    addToTotals(totals, cells);
    return { marginals, totals };
  }

  /** Late usage into hour or day rows already folded, and into the series of every such row from it on. */
  #patchCoarse(tier: "1h" | "1d", late: LateUsage, at: number): void {
    const { span } = TIERS[tier];
    const folded = late.cells.filter((cell) => cell[CELL.minute] < this.#watermark[tier]);
    const foldedDomains = late.domains.filter((row) => row[DOMAIN_SUMS.minute] < this.#watermark[tier]);
    if (folded.length === 0 && foldedDomains.length === 0) return;
    const first = Math.min(
      ...folded.map((cell) => floorTo(cell[CELL.minute], span)),
      ...foldedDomains.map((r) => floorTo(r[DOMAIN_SUMS.minute], span)),
    );
    const byBucket = Map.groupBy(folded, (cell) => floorTo(cell[CELL.minute], span));
    const domainsByBucket = Map.groupBy(foldedDomains, (row) => floorTo(row[DOMAIN_SUMS.minute], span));
    const touched = new Set([
      ...byBucket.keys(),
      ...domainsByBucket.keys(),
      ...this.buckets(tier).filter((b) => b >= first),
    ]);
    for (const bucket of [...touched].sort((a, b) => a - b)) {
      if (!this.#keeps(tier, bucket, at)) continue;
      const content = this.content(tier, bucket);
      const cells = byBucket.get(bucket) ?? [];
      const before = folded.filter((cell) => floorTo(cell[CELL.minute], span) <= bucket);
      const head = this.#heads[tier].get(bucket);
      let cum: { marginals: Marginals; totals: CumulativeTotals };
      if (head) {
        cum = {
          marginals: addCellsToMarginals(structuredClone(this.cumulative(tier, bucket)), before),
          totals: addToTotals(structuredClone(head.cumTotals ?? {}), before),
        };
      } else {
        // A bucket with no row until now: its series continues the row before it (already patched in this loop).
        cum = this.#extend(this.cumulativeBase(bucket), cells);
      }
      this.#writeCoarse(
        tier,
        bucket,
        {
          cells: sumCells([...content.cells, ...cells], () => bucket),
          domains: boundDomains([...content.domains, ...(domainsByBucket.get(bucket) ?? [])], () => bucket),
        },
        cum,
      );
    }
  }

  #children(tier: TierName, from: number, to: number): number[] {
    return this.buckets(tier).filter((bucket) => bucket >= from && bucket < to);
  }

  #write5m(bucket: number, content: BucketContent, totals: MinuteTotal[], samples: LoggedSample[]): void {
    const slot = this.#claim("5m", bucket);
    this.#sql.exec(
      `INSERT INTO bucket_5m (slot, bucket, totals, samples, body) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET bucket = excluded.bucket, totals = excluded.totals,
         samples = excluded.samples, body = excluded.body`,
      slot,
      bucket,
      JSON.stringify(totals),
      samples.length > 0 ? packJson(samples) : null,
      packJson(content),
    );
    this.#replaceSlot("5m", slot, { slot, bucket, totals, cumTotals: null }, content);
  }

  #writeCoarse(
    tier: "1h" | "1d",
    bucket: number,
    content: BucketContent,
    cum: { marginals: Marginals; totals: CumulativeTotals },
  ): void {
    const slot = this.#claim(tier, bucket);
    const totals = minuteTotals(content.cells, () => bucket);
    this.#sql.exec(
      `INSERT INTO bucket_${tier} (slot, bucket, totals, cum_totals, body, cum) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET bucket = excluded.bucket, totals = excluded.totals,
         cum_totals = excluded.cum_totals, body = excluded.body, cum = excluded.cum`,
      slot,
      bucket,
      JSON.stringify(totals),
      JSON.stringify(cum.totals),
      packJson(content),
      packJson(cum.marginals),
    );
    this.#replaceSlot(tier, slot, { slot, bucket, totals, cumTotals: cum.totals }, content);
    this.#cums.set(`${tier}:${bucket}`, cum.marginals);
  }

  /**
   * Whether late usage of a bucket goes in a row of its tier: the row is there, or the bucket is within its ring's
   * span at `at` (older, its row would be pruned within the hour) and its slot holds no newer bucket.
   */
  #keeps(tier: TierName, bucket: number, at: number): boolean {
    if (this.#heads[tier].has(bucket)) return true;
    const { span, slots } = TIERS[tier];
    return bucket + slots * span > at && this.#fits(tier, bucket);
  }

  /** Whether a bucket may have a row in its tier's ring: its slot holds no newer bucket. */
  #fits(tier: TierName, bucket: number): boolean {
    const held = this.#slots[tier].get(slotOf(tier, bucket));
    return held === undefined || held <= bucket;
  }

  /**
   * The slot a bucket's row is written to. A slot only ever moves on to a newer bucket: overwriting a newer one
   * would lose its usage, so that fails the change (it rolls back and is retried) rather than pass unnoticed.
   */
  #claim(tier: TierName, bucket: number): number {
    if (!this.#fits(tier, bucket)) {
      const held = this.#slots[tier].get(slotOf(tier, bucket)) as number;
      throw new Error(`the ${tier} row of ${bucket} would overwrite the newer row of ${held}`);
    }
    return slotOf(tier, bucket);
  }

  /** The slot now holds `head`: whatever bucket it held before is gone from memory. */
  #replaceSlot(tier: TierName, slot: number, head: BucketHead, content: BucketContent): void {
    const held = this.#slots[tier].get(slot);
    if (held !== undefined) this.#forget(tier, held);
    this.#remember(tier, head);
    this.#contents.set(`${tier}:${head.bucket}`, content);
  }

  #remember(tier: TierName, head: BucketHead): void {
    this.#heads[tier].set(head.bucket, head);
    this.#slots[tier].set(head.slot, head.bucket);
    delete this.#sorted[tier];
  }

  #forget(tier: TierName, bucket: number): void {
    const head = this.#heads[tier].get(bucket);
    if (head && this.#slots[tier].get(head.slot) === bucket) this.#slots[tier].delete(head.slot);
    this.#heads[tier].delete(bucket);
    this.#contents.delete(`${tier}:${bucket}`);
    this.#cums.delete(`${tier}:${bucket}`);
    delete this.#sorted[tier];
  }
}

export function floorTo(t: number, span: number): number {
  return t - (((t % span) + span) % span);
}

function slotOf(tier: TierName, bucket: number): number {
  return Math.floor(bucket / TIERS[tier].span) % TIERS[tier].slots;
}

/** The latest bucket (sorted ascending) whose end is at or before `limit`. */
function latestEndingBy(buckets: number[], span: number, limit: number): number | null {
  let lo = 0;
  let hi = buckets.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((buckets[mid] as number) + span <= limit) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? (buckets[lo - 1] as number) : null;
}

function addToTotals(totals: CumulativeTotals, cells: Iterable<CellRow>): CumulativeTotals {
  for (const cell of cells) {
    let sums = totals[cell[CELL.product]];
    if (!sums) {
      sums = zeroSums();
      totals[cell[CELL.product]] = sums;
    }
    addSums(sums, cell, CELL.bytesIn);
  }
  return totals;
}

/** The values a cumulative series holds, across products and dimensions (its weight in memory). */
function seriesValues(series: Marginals): number {
  let values = 0;
  for (const dimensions of Object.values(series)) {
    for (const byValue of Object.values(dimensions ?? {})) values += Object.keys(byValue ?? {}).length;
  }
  return values;
}
