import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UsageBatchLedger } from "../../src/durable-objects/usage-batch-ledger";

const DAY = 86_400_000;
const HOUR = 3_600_000;

const freshLedger = () => env.USAGE_BATCH_LEDGER.get(env.USAGE_BATCH_LEDGER.idFromName(crypto.randomUUID()));

/** Rows written by every SQL statement `run` makes (each cursor's `rowsWritten`, as the platform bills them). */
function rowsWrittenBy(sql: SqlStorage, run: () => void): number {
  const storage = Object.getPrototypeOf(sql) as SqlStorage;
  const exec = storage.exec;
  const cursors: Array<SqlStorageCursor<Record<string, SqlStorageValue>>> = [];
  const spy = vi.spyOn(storage, "exec").mockImplementation(function (this: SqlStorage, ...args) {
    const cursor = exec.apply(this, args);
    cursors.push(cursor);
    return cursor;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0);
}

/** `count` batches recorded in a ledger, now. */
function recordBatches(ledger: UsageBatchLedger, count: number): void {
  for (let i = 0; i < count; i++)
    ledger.record(crypto.randomUUID(), { accepted: 1, dropped: 0, receivedAt: Date.now() });
}

describe("UsageBatchLedger: a shard of the usage route's batch ids", () => {
  afterEach(() => vi.useRealTimers());

  it("recalls nothing for a batch never recorded, then its first post; a later record stores nothing and answers the first", async () => {
    const ledger = freshLedger();
    const first = { accepted: 7, dropped: 3, receivedAt: Date.now() };
    expect(await ledger.recall("gw-1")).toBeNull();
    expect(await ledger.record("gw-1", first)).toEqual({ first, recorded: true });
    expect(await ledger.recall("gw-1")).toEqual(first);
    const racing = { accepted: 10, dropped: 0, receivedAt: Date.now() + 1 };
    expect(await ledger.record("gw-1", racing)).toEqual({ first, recorded: false });
    expect(await ledger.recall("gw-2")).toBeNull();
  });

  it("recognises a batch id 6 days after its first post and forgets it after 8, whatever the hour of either", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now() + DAY;
    for (const hour of [0, 23]) {
      const ledger = freshLedger();
      const at = start - (start % DAY) + hour * HOUR + 1_000;
      vi.setSystemTime(at);
      const first = { accepted: 1, dropped: 0, receivedAt: at };
      await ledger.record("gw-week", first);
      // Records on the days between, in the ring's other slots.
      for (let day = 1; day <= 6; day++) {
        vi.setSystemTime(at + day * DAY);
        await ledger.record(`other-${day}`, first);
      }
      vi.setSystemTime(at + 6 * DAY);
      expect(await ledger.recall("gw-week")).toEqual(first);
      vi.setSystemTime(at - (at % DAY) + 8 * DAY - 1);
      expect(await ledger.recall("gw-week")).toEqual(first);
      vi.setSystemTime(at + 8 * DAY);
      expect(await ledger.recall("gw-week")).toBeNull();
      expect((await ledger.record("gw-week", { ...first, receivedAt: Date.now() })).recorded).toBe(true);
      expect(await ledger.recall("other-6")).toEqual(first);
    }
  });

  it("dropping a full day's table is billed 0 rows written, however many it holds; deleting its rows, one per row", async () => {
    for (const rows of [10, 2_000]) {
      const billed = await runInDurableObject(freshLedger(), (ledger: UsageBatchLedger, state) => {
        const sql = state.storage.sql;
        recordBatches(ledger, rows);
        const slot = sql.exec<{ slot: number }>("SELECT slot FROM ledger_days").one().slot;
        const drop = rowsWrittenBy(sql, () => sql.exec(`DROP TABLE batches_${slot}`));
        sql.exec(`CREATE TABLE batches_${slot} (id TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID`);
        for (let i = 0; i < rows; i++) sql.exec(`INSERT INTO batches_${slot} (id, n) VALUES (?, ?)`, `b${i}`, i);
        const remove = rowsWrittenBy(sql, () => sql.exec(`DELETE FROM batches_${slot}`));
        return { drop, remove };
      });
      expect(billed).toEqual({ drop: 0, remove: rows });
    }
  });

  it("pruning writes no row per batch: the first record of a day whose slot held 10 or 2,000 batches writes 4 rows", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const at = Date.now() + DAY;
    for (const held of [10, 2_000]) {
      vi.setSystemTime(at);
      const ledger = freshLedger();
      const sameDay = await runInDurableObject(ledger, (instance: UsageBatchLedger, state) => {
        recordBatches(instance, held);
        return rowsWrittenBy(state.storage.sql, () =>
          instance.record("same-day", { accepted: 1, dropped: 0, receivedAt: at }),
        );
      });
      // A batch recorded on a day its table is open: its own row.
      expect(sameDay).toBe(1);
      // 8 days on, the day's slot comes round: its table dropped (0 rows) and made again (2: the schema's), its day
      // noted (1), the batch's row (1).
      vi.setSystemTime(at + 8 * DAY);
      const written = await runInDurableObject(ledger, (instance: UsageBatchLedger, state) =>
        rowsWrittenBy(state.storage.sql, () =>
          instance.record("a-week-on", { accepted: 1, dropped: 0, receivedAt: at + 8 * DAY }),
        ),
      );
      expect(written).toBe(4);
      expect(await ledger.recall("same-day")).toBeNull();
    }
  });
});
