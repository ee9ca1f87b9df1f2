import { DAY } from "../../platform/clock";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";

/** The session generations' storage steps (`migrate`): append, never edit. */
const SESSION_GENERATIONS_STORAGE: StorageStep[] = [
  // 1: the table (keyed by the key's hash in the table itself: one row written per change).
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS session_generations (
        key_hash TEXT PRIMARY KEY, generation INTEGER NOT NULL, changed_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `),
];

/** A key's generation is kept this long after it last changed. */
export const GENERATIONS_KEPT_MS = 30 * DAY;
/** Keys kept per sub-user at most: past it, those changed longest ago are dropped. */
export const GENERATIONS_PER_SUBUSER = 1000;
/** The highest generation (the usage record's `session_gen` bound). */
const MAX_GENERATION = 2_147_483_647;

interface Entry {
  generation: number;
  changedAt: number;
}

/**
 * The generations of one sub-user's sticky-session keys, inside its gate (docs/gateway.md, "Sticky sessions"): a
 * node computes a session's exit from its key and the key's generation (`platform/sticky-sessions`), so that
 * terminating a session, which bumps the generation, moves its username to a new exit at every node. Keys are named
 * by `keyHash`; a key with no entry is at generation 0. Only termination writes here, one row per termination, and
 * a bump is idempotent: a retried termination (a second DELETE, the cron) changes nothing more.
 *
 * Bounded, so the snapshot that carries the generations to every node stays small (about 25 KB at most): an entry is
 * kept 30 days after its change, and at most 1,000 per sub-user (those changed longest ago dropped first). The
 * trade-off: a dropped key falls back to generation 0, so its next session may get the exit of a session of that
 * username terminated before (at least 30 days ago, or more than 1,000 terminations of other usernames ago).
 */
export class SessionGenerations {
  readonly #sql: SqlStorage;
  readonly #entries = new Map<string, Entry>();
  /** The view nodes get (cached until a change): hashes in order, so equal generations give equal text. */
  #view: Record<string, number> | null = null;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "session_generations", SESSION_GENERATIONS_STORAGE);
    const rows = this.#sql.exec<{ key_hash: string; generation: number; changed_at: number }>(
      "SELECT key_hash, generation, changed_at FROM session_generations",
    );
    for (const row of rows) this.#entries.set(row.key_hash, { generation: row.generation, changedAt: row.changed_at });
  }

  /** The generation of a key (by its hash): 0 unless a termination moved it. */
  generationOf(keyHash: string): number {
    return this.#entries.get(keyHash)?.generation ?? 0;
  }

  /**
   * A session of generation `from` of the key was terminated: the key moves to generation `from + 1`, unless it is
   * there or past it already. Returns the key's generation after, and whether it changed.
   */
  bump(keyHash: string, from: number, at: number): { generation: number; changed: boolean } {
    const current = this.generationOf(keyHash);
    const next = Math.min(MAX_GENERATION, Math.max(current, Math.max(0, Math.floor(from)) + 1));
    if (next === current) return { generation: current, changed: false };
    this.#entries.set(keyHash, { generation: next, changedAt: at });
    this.#sql.exec(
      `INSERT INTO session_generations (key_hash, generation, changed_at) VALUES (?, ?, ?)
       ON CONFLICT (key_hash) DO UPDATE SET generation = excluded.generation, changed_at = excluded.changed_at`,
      keyHash,
      next,
      at,
    );
    this.#dropOverCap(keyHash);
    this.#view = null;
    return { generation: next, changed: true };
  }

  /** `keyHash` → generation, for every key a termination moved (and not dropped since). */
  view(): Record<string, number> {
    if (this.#view) return this.#view;
    const hashes = [...this.#entries.keys()].sort();
    this.#view = Object.fromEntries(hashes.map((hash) => [hash, (this.#entries.get(hash) as Entry).generation]));
    return this.#view;
  }

  /** Drops entries 30 days after their change. Returns how many it dropped, and when the next is due (null: none). */
  purge(at: number): { dropped: number; next: number | null } {
    const stale = [...this.#entries].filter(([, entry]) => entry.changedAt + GENERATIONS_KEPT_MS <= at);
    this.#drop(stale.map(([hash]) => hash));
    let oldest: number | null = null;
    for (const entry of this.#entries.values()) oldest = Math.min(oldest ?? entry.changedAt, entry.changedAt);
    return { dropped: stale.length, next: oldest === null ? null : oldest + GENERATIONS_KEPT_MS };
  }

  /** Past the cap, the entries changed longest ago go (never `kept`, the one just changed). */
  #dropOverCap(kept: string): void {
    const over = this.#entries.size - GENERATIONS_PER_SUBUSER;
    if (over <= 0) return;
    const oldest = [...this.#entries]
      .filter(([hash]) => hash !== kept)
      .sort(([ha, a], [hb, b]) => a.changedAt - b.changedAt || (ha < hb ? -1 : 1))
      .slice(0, over)
      .map(([hash]) => hash);
    this.#drop(oldest);
  }

  #drop(hashes: string[]): void {
    if (hashes.length === 0) return;
    for (const hash of hashes) this.#entries.delete(hash);
    this.#sql.exec(
      "DELETE FROM session_generations WHERE key_hash IN (SELECT value FROM json_each(?))",
      JSON.stringify(hashes),
    );
    this.#view = null;
  }
}
