import { MINUTE, now } from "../../platform/clock";
import {
  ARRIVAL_PAGES_TABLE,
  ARRIVALS_KEPT_MS,
  type ArrivalRow,
  ArrivalRows,
  LOGGED_SAMPLE,
  type LoggedSample,
} from "./arrival-rows";
import { packJson } from "./blob-codec";
import { CELL, type CellRow, type SourceRow, type TrafficProduct } from "./contract";
import { FoldedTiers, floorTo, type TierName } from "./folded-tiers";
import { SessionIndex, type SessionRecord } from "./session-index";
import { boundDomains, DOMAIN_SUMS, type DomainSums, minuteTotals, sumCells } from "./summary";

/** The tables of the earlier layout (a row per cell and tier, per log entry, part key, source and session). */
const LEGACY_TABLES = [
  "pending",
  "fact_1m",
  "fact_5m",
  "fact_1h",
  "fact_1d",
  "cum",
  "cum_last",
  "cum_series",
  "fold_deltas",
  "cum_thinned",
  "minute_requests",
  "domain_1m",
  "domain_5m",
  "domain_1h",
  "domain_1d",
  "client_sources",
  "source_alerts",
  "request_log",
  "sessions",
  "usage_applied",
];
/** The storage areas of the earlier layout, whose versions go with their tables. */
const LEGACY_AREAS = ["usage_applied", "rollups", "domain_rollups", "client_sources", "request_log", "session_index"];

const FACT = "bucket, product, subuser, region, asn, tag, carrier, ip, bytes_in, bytes_out, requests, errors";

/**
 * Converts a store of the earlier layout, in the layout step's transaction: the tiers' rows become one row per
 * bucket (days, then hours, then 5-minute buckets, so the cumulative series are rebuilt in order), the minute tier,
 * the request log and the part keys become arrival rows, usage still pending is added as it would have arrived late,
 * sources become snapshots, and the session index's rows session records. Then the old tables are dropped. Sums are
 * unchanged: every cell lands in the same buckets it was in.
 */
export function convertLegacyLayout(sql: SqlStorage): void {
  const present = new Set(
    sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .toArray()
      .map((row) => row.name),
  );
  if (!present.has("fact_1d")) return;
  const at = now();
  const minute = floorTo(at, MINUTE);
  const cellsOf = (table: string) =>
    present.has(table)
      ? sql
          .exec<{ r: string }>(`SELECT json_array(${FACT}) AS r FROM ${table}`)
          .toArray()
          .map((row) => JSON.parse(row.r) as CellRow)
      : [];
  const domainsOf = (table: string) =>
    present.has(table)
      ? sql
          .exec<{ r: string }>(
            `SELECT json_array(bucket, product, domain, bytes_in, bytes_out, requests, errors) AS r FROM ${table}`,
          )
          .toArray()
          .map((row) => JSON.parse(row.r) as DomainSums)
      : [];

  const tiers = new FoldedTiers(sql);
  const samples = legacySamples(sql, present);
  const recent = (ts: number) => ts > at - ARRIVALS_KEPT_MS + MINUTE;
  for (const tier of ["1d", "1h", "5m"] as TierName[]) {
    const cells = Map.groupBy(cellsOf(`fact_${tier}`), (cell) => cell[CELL.minute]);
    const domains = Map.groupBy(domainsOf(`domain_${tier}`), (row) => row[DOMAIN_SUMS.minute]);
    const folded =
      tier === "5m"
        ? Map.groupBy(
            samples.filter((s) => !recent(s[LOGGED_SAMPLE.ts])),
            (s) => floorTo(s[LOGGED_SAMPLE.ts], 5 * MINUTE),
          )
        : new Map();
    for (const bucket of [...new Set([...cells.keys(), ...domains.keys()])].sort((a, b) => a - b)) {
      tiers.load(
        tier,
        bucket,
        { cells: cells.get(bucket) ?? [], domains: boundDomains(domains.get(bucket) ?? []) },
        folded.get(bucket) ?? [],
      );
    }
  }

  // Arrival rows write a body past a row's room in pages (a later step's table, needed here already).
  sql.exec(ARRIVAL_PAGES_TABLE);
  const arrivals = new ArrivalRows(sql);
  const rows = new Map<number, ArrivalRow>();
  const rowOf = (m: number) => {
    let row = rows.get(m);
    if (!row) {
      row = ArrivalRows.empty(m);
      rows.set(m, row);
    }
    return row;
  };
  for (const cell of cellsOf("fact_1m")) {
    const cellMinute = cell[CELL.minute];
    if (recent(cellMinute)) rowOf(cellMinute).content.cells.push(cell);
  }
  for (const domain of domainsOf("domain_1m")) {
    const domainMinute = domain[DOMAIN_SUMS.minute];
    if (recent(domainMinute)) rowOf(domainMinute).content.domains.push(domain);
  }
  for (const sample of samples) {
    const ts = sample[LOGGED_SAMPLE.ts];
    if (recent(ts)) rowOf(floorTo(ts, MINUTE)).samples.push(sample);
  }
  if (present.has("usage_applied")) {
    for (const { key, at: appliedAt } of sql.exec<{ key: string; at: number }>("SELECT key, at FROM usage_applied")) {
      if (recent(appliedAt)) rowOf(floorTo(appliedAt, MINUTE)).keys.push(key);
    }
  }
  // Pending usage was counted and metered but not folded: it arrives now, late where its buckets are folded.
  const pending = cellsOf("pending");
  const late = pending.filter((cell) => tiers.isFolded(cell[CELL.minute]));
  if (late.length > 0) tiers.patch({ cells: late, domains: [], samples: [] }, at);
  rowOf(minute).content.cells.push(...pending);
  for (const row of [...rows.values()].sort((a, b) => a.minute - b.minute)) {
    row.content.cells = sumCells(row.content.cells);
    row.content.domains = boundDomains(row.content.domains);
    row.totals = minuteTotals(row.content.cells);
    for (const cell of row.content.cells) {
      row.firstMinute = Math.min(row.firstMinute, cell[CELL.minute]);
      row.lastMinute = Math.max(row.lastMinute, cell[CELL.minute]);
    }
    arrivals.write(row);
  }

  convertSources(sql, present, minute);
  convertSessions(sql, present, at);
  for (const table of LEGACY_TABLES) if (present.has(table)) sql.exec(`DROP TABLE ${table}`);
  sql.exec(
    "DELETE FROM _storage_versions WHERE area IN (SELECT value FROM json_each(?))",
    JSON.stringify(LEGACY_AREAS),
  );
}

/** The request log's entries, as the store now keeps candidates (an entry from before `kept_below` is never thinned). */
function legacySamples(sql: SqlStorage, present: Set<string>): LoggedSample[] {
  if (!present.has("request_log")) return [];
  const keptBelow = sql
    .exec<{ name: string }>("PRAGMA table_info(request_log)")
    .toArray()
    .some((column) => column.name === "kept_below");
  return sql
    .exec<{ r: string }>(
      `SELECT json_array(request_id, ts, product, subuser, method, target_host, status, bytes, exit_ip, exit_geo,
         exit_asn, tag, ${keptBelow ? "kept_below" : "NULL"}) AS r FROM request_log`,
    )
    .toArray()
    .map((row) => JSON.parse(row.r) as LoggedSample);
}

function convertSources(sql: SqlStorage, present: Set<string>, minute: number): void {
  if (present.has("client_sources")) {
    const rows = sql
      .exec<{ r: string }>(
        "SELECT json_array(subuser, block, first_seen, last_seen, requests, bytes) AS r FROM client_sources",
      )
      .toArray()
      .map((row) => JSON.parse(row.r) as SourceRow);
    // One snapshot row holds them all (its shard is rewritten with the others at the next snapshot).
    if (rows.length > 0) {
      sql.exec(
        "INSERT INTO source_shards (shard, at, minute, tag, body) VALUES (0, ?, ?, 0, ?)",
        minute,
        minute,
        packJson(rows),
      );
    }
  }
  if (present.has("source_alerts")) {
    const states = Object.fromEntries(
      sql
        .exec<{
          subuser: string;
          last_at: number | null;
          unreported: number;
          unreported_blocks: string;
          outbox: string | null;
        }>("SELECT * FROM source_alerts")
        .toArray()
        .map((row) => [
          row.subuser,
          {
            lastAt: row.last_at,
            unreported: row.unreported,
            unreportedBlocks: JSON.parse(row.unreported_blocks) as string[],
            outbox: row.outbox ? JSON.parse(row.outbox) : null,
          },
        ]),
    );
    sql.exec("INSERT INTO source_alert_state (id, body) VALUES (1, ?)", JSON.stringify(states));
  }
}

/** The session index's visible sessions become records kept as they stand (usage so far included). */
function convertSessions(sql: SqlStorage, present: Set<string>, at: number): void {
  if (!present.has("sessions")) return;
  for (const row of sql.exec<{
    id: string;
    subuser: string;
    gate: string;
    product: TrafficProduct;
    session_id: string;
    region: string;
    state: string | null;
    city: string | null;
    asn: number | null;
    exit_ip: string | null;
    started_at: number;
    expires_at: number;
    status: "active" | "terminated";
    terminated_at: number | null;
    bytes_used: number;
    requests: number;
    repinned: number;
  }>("SELECT * FROM sessions")) {
    const visible = row.status === "active" ? row.expires_at > at : (row.terminated_at ?? 0) > at - 24 * 60 * MINUTE;
    if (!visible) continue;
    const record: SessionRecord = {
      identity: {
        id: row.id,
        subuserId: row.subuser,
        gateName: row.gate,
        product: row.product,
        sessionId: row.session_id,
        region: row.region,
        state: row.state,
        city: row.city,
        asn: row.asn,
        startedAt: row.started_at,
        expiresAt: row.expires_at,
      },
      usage:
        row.exit_ip === null && row.requests === 0
          ? null
          : {
              username: "",
              product: row.product,
              firstTs: row.started_at,
              lastTs: row.started_at,
              firstExitIp: row.exit_ip ?? "",
              repinnedExitIp: row.repinned ? row.exit_ip : null,
              bytes: row.bytes_used,
              requests: row.requests,
              lastRequests: [],
            },
      status: row.status,
      terminatedAt: row.terminated_at,
    };
    SessionIndex.save(sql, record);
  }
}
