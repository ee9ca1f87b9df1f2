import { DurableObject } from "cloudflare:workers";
import { DAY, now } from "../../platform/clock";
import { migrate, type StorageStep } from "../shared/storage-versions";

/**
 * How long a batch id is recognised: longer than the gateway retries a batch (7 days leaves room for a long
 * outage).
 */
export const USAGE_DEDUPE_KEPT_MS = 7 * DAY;
/** Days of arrival a batch id is looked for in: today's and the 7 before (an id is forgotten 7 to 8 days on). */
const KEPT_DAYS = USAGE_DEDUPE_KEPT_MS / DAY + 1;
/**
 * The ring of day tables, `batches_<slot>` (a day's slot: its number mod 8), at least one per day kept. Changing
 * it, or a day table's form, takes a storage step.
 */
const DAY_TABLES = 8;

/** The ledger's storage steps (`migrate`): append, never edit. */
const LEDGER_STORAGE: StorageStep[] = [
  // 1: the ring of day tables, and the day of arrival each holds.
  (sql) => {
    sql.exec("CREATE TABLE IF NOT EXISTS ledger_days (slot INTEGER PRIMARY KEY, day INTEGER NOT NULL)");
    for (let slot = 0; slot < DAY_TABLES; slot++) sql.exec(dayTable(slot));
  },
];

/** What the first post of a batch answered, and when it arrived. */
export interface FirstPost {
  accepted: number;
  dropped: number;
  receivedAt: number;
}

/**
 * One of the usage route's shards of batch ids (`usage-batches-<n>`, by a hash of the id): what the first post of
 * each batch answered, kept 7 days so a repeated post is answered `duplicate: true` and enqueues nothing. A batch
 * costs one row, written once; nothing is deleted row by row: rows sit in a table per day of arrival, a ring of 8,
 * and a day's table past the horizon is dropped whole when its slot comes round (the first write of a day).
 */
export class UsageBatchLedger extends DurableObject {
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  /** The day of arrival each slot's table holds (absent: none yet). */
  readonly #days = new Map<number, number>();

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#storage = ctx.storage;
    this.#sql = ctx.storage.sql;
    migrate(ctx.storage, "usage_batch_ledger", LEDGER_STORAGE);
    for (const { slot, day } of this.#sql.exec<{ slot: number; day: number }>("SELECT slot, day FROM ledger_days")) {
      this.#days.set(slot, day);
    }
  }

  /** The first post of `batchId` within the last 7 days, or null. Reads only: a lookup by key per kept day. */
  recall(batchId: string): FirstPost | null {
    for (const slot of this.#keptSlots(dayOf(now()))) {
      const row = this.#sql
        .exec<{ accepted: number; dropped: number; received_at: number }>(
          `SELECT accepted, dropped, received_at FROM batches_${slot} WHERE id = ?`,
          batchId,
        )
        .toArray()[0];
      if (row) return { accepted: row.accepted, dropped: row.dropped, receivedAt: row.received_at };
    }
    return null;
  }

  /**
   * Records the first post of `batchId` unless one is recorded: the stored first post, and whether this call
   * stored it (a copy that raced the first post finds the first's).
   */
  record(batchId: string, post: FirstPost): { first: FirstPost; recorded: boolean } {
    const first = this.recall(batchId);
    if (first) return { first, recorded: false };
    const slot = this.#openToday();
    this.#sql.exec(
      `INSERT INTO batches_${slot} (id, accepted, dropped, received_at) VALUES (?, ?, ?, ?)`,
      batchId,
      post.accepted,
      post.dropped,
      post.receivedAt,
    );
    return { first: post, recorded: true };
  }

  /** The slots whose tables hold a day still kept at `today`, the newest first (a retry is most often recent). */
  #keptSlots(today: number): number[] {
    return [...this.#days]
      .filter(([, day]) => day <= today && day > today - KEPT_DAYS)
      .sort(([, a], [, b]) => b - a)
      .map(([slot]) => slot);
  }

  /**
   * Today's slot, emptied first when it holds another day (8 days ago, past the horizon; or a later one, a clock
   * moved back). Emptying drops the table and makes it again: measured (test/durable-objects/usage-batch-ledger
   * .test.ts), a `DROP TABLE` is billed 0 rows written however many rows it held, where a `DELETE` is billed one
   * per row; making the table again is billed 2, and noting the slot's day 1. So a batch costs its one row, and a
   * day 3 more per shard.
   */
  #openToday(): number {
    const today = dayOf(now());
    const slot = today % DAY_TABLES;
    const held = this.#days.get(slot);
    if (held === today) return slot;
    this.#storage.transactionSync(() => {
      if (held !== undefined) this.#sql.exec(`DROP TABLE batches_${slot}; ${dayTable(slot)}`);
      this.#sql.exec("INSERT OR REPLACE INTO ledger_days (slot, day) VALUES (?, ?)", slot, today);
    });
    this.#days.set(slot, today);
    return slot;
  }
}

/** A day's table: one row per batch, keyed by its id alone (no rowid, no other index). */
function dayTable(slot: number): string {
  return `CREATE TABLE IF NOT EXISTS batches_${slot} (
    id TEXT PRIMARY KEY, accepted INTEGER NOT NULL, dropped INTEGER NOT NULL, received_at INTEGER NOT NULL
  ) WITHOUT ROWID`;
}

/** The UTC day of a moment (days since the epoch). */
function dayOf(ms: number): number {
  return Math.floor(ms / DAY);
}
