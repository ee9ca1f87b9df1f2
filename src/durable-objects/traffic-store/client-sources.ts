import { type AreaStorage, migrate } from "../shared/storage-versions";
import {
  type ClientSource,
  NEW_SOURCE_ALERT_BLOCKS,
  NEW_SOURCE_ALERT_WINDOW_MS,
  SOURCES_KEPT_MS,
  SOURCES_PER_SUBUSER,
  type SourceAlert,
  type SourceAlertReceipt,
  type SourceEntry,
} from "./contract";

/**
 * The client blocks (IPv4 /24, IPv6 /64) each sub-user's traffic came from, kept 30 days after they were last seen
 * and at most 1,000 per sub-user (the least recently seen go first), and the `subuser.new_source` alerts they
 * raise: a block a sub-user never had (or had forgotten) counts as new; a sub-user's new blocks form one alert at
 * most every 15 minutes, counting every new block since the previous one (blocks that arrive inside the window wait
 * for the sub-user's account's next usage after it). An alert stays in its sub-user's outbox until the caller
 * confirms it recorded it, and is handed out by every ingest until then (always the same alert: its `at`).
 */
export class ClientSources {
  readonly #sql: SqlStorage;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "client_sources", [
      // 1: the sources and the alerts.
      (sql) =>
        sql.exec(`
          CREATE TABLE IF NOT EXISTS client_sources (subuser TEXT NOT NULL, block TEXT NOT NULL,
            first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, requests INTEGER NOT NULL, bytes INTEGER NOT NULL,
            PRIMARY KEY (subuser, block)) WITHOUT ROWID;
          CREATE INDEX IF NOT EXISTS client_sources_first ON client_sources (subuser, first_seen, block);
          CREATE INDEX IF NOT EXISTS client_sources_last ON client_sources (last_seen);
          CREATE TABLE IF NOT EXISTS source_alerts (subuser TEXT PRIMARY KEY, last_at INTEGER,
            unreported INTEGER NOT NULL DEFAULT 0, unreported_blocks TEXT NOT NULL DEFAULT '[]', outbox TEXT)
            WITHOUT ROWID;
          CREATE INDEX IF NOT EXISTS source_alerts_due ON source_alerts (last_at) WHERE unreported > 0;
          CREATE INDEX IF NOT EXISTS source_alerts_outbox ON source_alerts (subuser) WHERE outbox IS NOT NULL;`),
    ]);
  }

  /**
   * Adds usage parts' sources (each part once: the caller's exactly-once step), counts the new blocks and forms
   * the alerts now due (also those that waited for their window, with or without new sources).
   */
  ingest(sources: ClientSource[], at: number): void {
    if (sources.length > 0) this.#add(sources);
    this.#formAlerts(at);
  }

  #add(sources: ClientSource[]): void {
    const merged = new Map<string, ClientSource>();
    for (const s of sources) {
      const key = `${s.subuserId}|${s.block}`;
      const m = merged.get(key);
      if (!m) merged.set(key, { ...s });
      else {
        m.firstSeen = Math.min(m.firstSeen, s.firstSeen);
        m.lastSeen = Math.max(m.lastSeen, s.lastSeen);
        m.requests += s.requests;
        m.bytes += s.bytes;
      }
    }
    const rows = JSON.stringify(
      [...merged.values()].map((s) => [s.subuserId, s.block, s.firstSeen, s.lastSeen, s.requests, s.bytes]),
    );
    const known = new Set(
      this.#sql
        .exec<{ k: string }>(
          `SELECT c.subuser || '|' || c.block AS k FROM json_each(?) j CROSS JOIN client_sources c
           WHERE c.subuser = j.value->>0 AND c.block = j.value->>1`,
          rows,
        )
        .toArray()
        .map((row) => row.k),
    );
    this.#sql.exec(
      `INSERT INTO client_sources (subuser, block, first_seen, last_seen, requests, bytes)
       SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5 FROM json_each(?) WHERE true
       ON CONFLICT DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
         last_seen = max(last_seen, excluded.last_seen), requests = requests + excluded.requests,
         bytes = bytes + excluded.bytes`,
      rows,
    );
    const fresh = Map.groupBy(
      [...merged.values()].filter((s) => !known.has(`${s.subuserId}|${s.block}`)),
      (s) => s.subuserId,
    );
    for (const [subuserId, blocks] of fresh) {
      this.#sql.exec(
        `INSERT INTO source_alerts (subuser, unreported, unreported_blocks) VALUES (?, ?, ?)
         ON CONFLICT DO UPDATE SET unreported = unreported + excluded.unreported,
           unreported_blocks = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(unreported_blocks)
             UNION ALL SELECT value FROM json_each(excluded.unreported_blocks) LIMIT ?))`,
        subuserId,
        blocks.length,
        JSON.stringify(
          blocks
            .map((s) => s.block)
            .sort()
            .slice(0, NEW_SOURCE_ALERT_BLOCKS),
        ),
        NEW_SOURCE_ALERT_BLOCKS,
      );
      this.#sql.exec(
        `DELETE FROM client_sources WHERE subuser = ? AND block IN (SELECT block FROM client_sources WHERE subuser = ?
           ORDER BY last_seen DESC, block LIMIT -1 OFFSET ?)`,
        subuserId,
        subuserId,
        SOURCES_PER_SUBUSER,
      );
    }
  }

  /** Moves each sub-user's unreported blocks into an alert when its window allows and its outbox is empty. */
  #formAlerts(at: number): void {
    this.#sql.exec(
      `UPDATE source_alerts SET outbox = json_object('at', ?, 'newBlocks', unreported, 'blocks', json(unreported_blocks)),
         last_at = ?, unreported = 0, unreported_blocks = '[]'
       WHERE unreported > 0 AND outbox IS NULL AND (last_at IS NULL OR last_at <= ?)`,
      at,
      at,
      at - NEW_SOURCE_ALERT_WINDOW_MS,
    );
  }

  /** The alerts not confirmed yet. */
  alerts(): SourceAlert[] {
    return this.#sql
      .exec<{ subuser: string; outbox: string }>("SELECT subuser, outbox FROM source_alerts WHERE outbox IS NOT NULL")
      .toArray()
      .map((row) => ({ subuserId: row.subuser, ...(JSON.parse(row.outbox) as Omit<SourceAlert, "subuserId">) }));
  }

  /**
   * The caller handled these alerts: they leave the outboxes (a newer alert in an outbox stays). One it did not
   * record (its sub-user did not opt in) does not start a window: an opt-in later is not held back by it.
   */
  confirm(alerts: SourceAlertReceipt[]): void {
    this.#sql.exec(
      `UPDATE source_alerts SET outbox = NULL, last_at = CASE WHEN j.value->>2 THEN last_at ELSE NULL END
       FROM json_each(?) j WHERE source_alerts.subuser = j.value->>0 AND source_alerts.outbox->>'at' = j.value->>1`,
      JSON.stringify(alerts.map((a) => [a.subuserId, a.at, a.recorded])),
    );
  }

  /** A sub-user's blocks seen in the last 30 days, newest first seen first; keyset after `(firstSeen, block)`. */
  list(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
    at: number,
  ): SourceEntry[] {
    return this.#sql
      .exec<{ block: string; first_seen: number; last_seen: number; requests: number; bytes: number }>(
        `SELECT block, first_seen, last_seen, requests, bytes FROM client_sources
         WHERE subuser = ? AND last_seen >= ? ${after ? "AND (first_seen, block) < (?, ?)" : ""}
         ORDER BY first_seen DESC, block DESC LIMIT ?`,
        subuserId,
        at - SOURCES_KEPT_MS,
        ...(after ? [after.firstSeen, after.block] : []),
        limit,
      )
      .toArray()
      .map((row) => ({
        block: row.block,
        firstSeen: row.first_seen,
        lastSeen: row.last_seen,
        requests: row.requests,
        bytes: row.bytes,
      }));
  }

  /** Forgets blocks not seen for 30 days, and the alert state of sub-users with nothing left to report. */
  prune(at: number): void {
    this.#sql.exec("DELETE FROM client_sources WHERE last_seen < ?", at - SOURCES_KEPT_MS);
    this.#sql.exec(
      "DELETE FROM source_alerts WHERE last_at < ? AND unreported = 0 AND outbox IS NULL",
      at - SOURCES_KEPT_MS,
    );
  }
}
