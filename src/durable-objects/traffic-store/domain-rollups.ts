import { MINUTE } from "../../platform/clock";
import { type AreaStorage, migrate } from "../shared/storage-versions";
import {
  DOMAIN_ROWS,
  DOMAINS_PER_BUCKET,
  type DomainCell,
  type Metrics,
  OTHER_DOMAIN,
  type TrafficQuery,
  type TrafficRow,
} from "./contract";
import { FACT_1M_KEPT_MS, SUMS, TIERS } from "./traffic-rollups";

/** The domain tiers: the rollups' resolutions and horizons. */
const DOMAIN_TIERS = [{ table: "fact_1m", span: MINUTE, keptMs: FACT_1M_KEPT_MS }, ...TIERS].map((tier) => ({
  ...tier,
  table: tier.table.replace("fact_", "domain_"),
}));

interface DomainSum extends Metrics {
  product: string;
  bucket: number;
  domain: string;
}

/**
 * Traffic per target domain (the registrable domain of `target_host`), per product and bucket of each tier, with a
 * bounded number of rows: a bucket names at most `DOMAINS_PER_BUCKET` domains, the first to arrive (the heaviest
 * first within each ingest), and adds every further domain to its `(other)` row. Every byte and request of a
 * domain cell lands in exactly one row of each tier, so the rows of a range always sum to its ungrouped total.
 * Written at ingest into all four tiers (no pending heap: a bucket's bound needs its rows as they stand).
 */
export class DomainRollups {
  readonly #sql: SqlStorage;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "domain_rollups", [
      // 1: the tiers.
      (sql) => {
        for (const { table } of DOMAIN_TIERS) {
          sql.exec(`CREATE TABLE IF NOT EXISTS ${table} (
            product TEXT NOT NULL, bucket INTEGER NOT NULL, domain TEXT NOT NULL,
            bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL,
            PRIMARY KEY (product, bucket, domain)) WITHOUT ROWID`);
        }
      },
    ]);
  }

  /** Adds domain cells to every tier, each bucket within its bound. */
  ingest(cells: DomainCell[]): void {
    if (cells.length === 0) return;
    for (const tier of DOMAIN_TIERS) this.#ingestTier(tier.table, tier.span, cells);
  }

  #ingestTier(table: string, span: number, cells: DomainCell[]): void {
    const sums = new Map<string, DomainSum>();
    for (const cell of cells) {
      const bucket = cell.minute - (cell.minute % span);
      const key = `${cell.product}|${bucket}|${cell.domain}`;
      const sum = sums.get(key) ?? { product: cell.product, bucket, domain: cell.domain, ...zero() };
      add(sum, cell);
      sums.set(key, sum);
    }
    const incoming = [...sums.values()].sort(heaviestFirst);
    const present = new Set(
      this.#sql
        .exec<{ k: string }>(
          `SELECT t.product || '|' || t.bucket || '|' || t.domain AS k FROM json_each(?) j CROSS JOIN ${table} t
           WHERE t.product = j.value->>0 AND t.bucket = j.value->>1 AND t.domain = j.value->>2`,
          JSON.stringify(incoming.map((s) => [s.product, s.bucket, s.domain])),
        )
        .toArray()
        .map((row) => row.k),
    );
    const named = new Map(
      this.#sql
        .exec<{ k: string; n: number }>(
          `SELECT t.product || '|' || t.bucket AS k, count(*) AS n
           FROM (SELECT DISTINCT value->>0 AS p, value->>1 AS b FROM json_each(?)) j CROSS JOIN ${table} t
           WHERE t.product = j.p AND t.bucket = j.b AND t.domain <> ? GROUP BY t.product, t.bucket`,
          JSON.stringify(incoming.map((s) => [s.product, s.bucket])),
          OTHER_DOMAIN,
        )
        .toArray()
        .map((row) => [row.k, row.n]),
    );
    const rows = new Map<string, DomainSum>();
    for (const sum of incoming) {
      const bucketKey = `${sum.product}|${sum.bucket}`;
      let domain = sum.domain;
      if (domain !== OTHER_DOMAIN && !present.has(`${bucketKey}|${domain}`)) {
        const count = named.get(bucketKey) ?? 0;
        if (count < DOMAINS_PER_BUCKET) named.set(bucketKey, count + 1);
        else domain = OTHER_DOMAIN;
      }
      const row = rows.get(`${bucketKey}|${domain}`) ?? { product: sum.product, bucket: sum.bucket, domain, ...zero() };
      add(row, sum);
      rows.set(`${bucketKey}|${domain}`, row);
    }
    this.#sql.exec(
      `INSERT INTO ${table} (product, bucket, domain, bytes_in, bytes_out, requests, errors)
       SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6 FROM json_each(?) WHERE true
       ON CONFLICT DO UPDATE SET bytes_in = bytes_in + excluded.bytes_in, bytes_out = bytes_out + excluded.bytes_out,
         requests = requests + excluded.requests, errors = errors + excluded.errors`,
      JSON.stringify(
        [...rows.values()].map((r) => [r.product, r.bucket, r.domain, r.bytesIn, r.bytesOut, r.requests, r.errors]),
      ),
    );
  }

  /**
   * Totals per domain over `[from, to)` at the query's resolution (the range is aligned to it): the heaviest
   * `DOMAIN_ROWS` domains (bytes in + out, then requests), heaviest first, then `(other)` with everything else.
   */
  query(query: TrafficQuery): TrafficRow[] {
    const sums = this.#sql
      .exec<{ domain: string; bytes_in: number; bytes_out: number; requests: number; errors: number }>(
        `SELECT domain, ${SUMS} FROM domain_${query.resolution} WHERE product = ? AND bucket >= ? AND bucket < ?
         GROUP BY domain`,
        query.product,
        query.from,
        query.to,
      )
      .toArray()
      .map((row) => ({
        domain: row.domain,
        bytesIn: row.bytes_in,
        bytesOut: row.bytes_out,
        requests: row.requests,
        errors: row.errors,
      }))
      .sort(heaviestFirst);
    const named = sums.filter((row) => row.domain !== OTHER_DOMAIN);
    const other = zero();
    for (const row of [...named.slice(DOMAIN_ROWS), ...sums.filter((r) => r.domain === OTHER_DOMAIN)]) add(other, row);
    const rows: TrafficRow[] = named
      .slice(0, DOMAIN_ROWS)
      .map(({ domain, ...metrics }) => ({ key: domain, ...metrics }));
    if (other.requests > 0 || other.bytesIn > 0 || other.bytesOut > 0) rows.push({ key: OTHER_DOMAIN, ...other });
    return rows.filter((row) => row.requests > 0 || row.bytesIn > 0 || row.bytesOut > 0);
  }

  /** Forgets buckets past each tier's horizon. */
  prune(at: number): void {
    for (const tier of DOMAIN_TIERS) this.#sql.exec(`DELETE FROM ${tier.table} WHERE bucket < ?`, at - tier.keptMs);
  }
}

function zero(): Metrics {
  return { bytesIn: 0, bytesOut: 0, requests: 0, errors: 0 };
}

function add(target: Metrics, m: Metrics): void {
  target.bytesIn += m.bytesIn;
  target.bytesOut += m.bytesOut;
  target.requests += m.requests;
  target.errors += m.errors;
}

/** Bytes in + out, then requests, descending; then the domain (a total order: the same input, the same rows). */
function heaviestFirst(a: Metrics & { domain: string }, b: Metrics & { domain: string }): number {
  const bytes = b.bytesIn + b.bytesOut - (a.bytesIn + a.bytesOut);
  if (bytes !== 0) return bytes;
  if (b.requests !== a.requests) return b.requests - a.requests;
  return a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0;
}
