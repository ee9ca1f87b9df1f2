import { performance } from "node:perf_hooks";
import { database } from "../../src/db/client";
import { ingestUsageBatch } from "../../src/domain/traffic/ingest";
import { deliverToTails } from "../../src/domain/traffic/live-tail";
import { plainlyValidBatch } from "../../src/domain/traffic/usage-records";
import { UsageBatchLedger } from "../../src/durable-objects/usage-batch-ledger";
import { ownersDatabase } from "./d1";
import { NodeSqlStorage } from "./node-sql";
import { timedCalls } from "./timed-calls";

/** The sealing key the simulated API signs its nodes' usage owners with (`platform/owner-tag`). */
export const SIM_SEALING_KEY = "c2ltdWxhdGVkLXNlYWxpbmcta2V5LWZvci1iZW5jaCE=";

/** The ledger's shards, as `wrangler.toml` sets `USAGE_LEDGER_SHARDS`. */
export const LEDGER_SHARDS = 16;

/**
 * The usage route as built (`ingestUsageBatch`): the gateway's batch checked, its owners taken from the records
 * (each sub-user's signed owner verified once per isolate), the accounts' shard counts read from D1, the batch ledger asked and told (its shards are real `UsageBatchLedger` objects on
 * `node:sqlite`), the accounts' parts packed and sent to the `usage` queue (each message's body to `sent`). The
 * clock is the POST's time. Measured per POST: the route's own CPU (without D1's and the ledger's time), D1's rows
 * read and SQLite time, the ledger's calls, rows and CPU.
 */
export function usageRoute(root: string, sent: (body: Uint8Array) => void) {
  const owners = ownersDatabase(root);
  const shards = new Map<string, NodeSqlStorage>();
  let ledgerCalls = 0;
  let ledgerMs = 0;
  const ledgerOf = (name: string) => {
    const sql = new NodeSqlStorage();
    const object = new UsageBatchLedger({ storage: sql } as never, {} as never);
    sql.countWrites();
    shards.set(name, sql);
    return timedCalls(object, (ms) => {
      ledgerCalls++;
      ledgerMs += ms;
    });
  };
  const objects = new Map<string, UsageBatchLedger>();
  const queue = {
    sendBatch: async (messages: Array<{ body: Uint8Array }>) => {
      for (const message of messages) sent(message.body);
    },
  };
  const env = {
    DB: owners.binding,
    SEALING_KEY: SIM_SEALING_KEY,
    USAGE_QUEUE: queue,
    USAGE_LEDGER_SHARDS: String(LEDGER_SHARDS),
    GATEWAY_USER_PREFIX: "user",
    USAGE_BATCH_LEDGER: {
      idFromName: (name: string) => name,
      get: (name: string) => objects.get(name) ?? objects.set(name, ledgerOf(name)).get(name),
    },
  } as unknown as Cloudflare.Env;
  const ctx = { db: database(owners.binding as unknown as D1Database), env };
  return {
    d1: owners.binding,
    knowOwners: owners.add,
    /** Posts `body` at `at`; returns the route's CPU in ms. */
    async post(body: string, at: number): Promise<number> {
      const realNow = Date.now;
      Date.now = () => at;
      const d1Ms = () => owners.binding.sqliteMs + owners.binding.replica.sqliteMs;
      const elsewhere = d1Ms() + ledgerMs;
      const begin = performance.now();
      try {
        const batch = plainlyValidBatch(JSON.parse(body));
        if (!batch) throw new Error("the simulated batch is not plainly valid");
        const answer = await ingestUsageBatch(ctx, batch);
        if (answer.dropped > 0 || answer.duplicate) {
          throw new Error(
            `the route dropped ${answer.dropped} of the fleet's records (duplicate: ${answer.duplicate})`,
          );
        }
        return performance.now() - begin - (d1Ms() + ledgerMs - elsewhere);
      } finally {
        Date.now = realNow;
      }
    },
    /**
     * The live tail's cost to a POST while no account has one open: the isolate's read of the tailed accounts
     * (`deliverToTails`, each call a second after the last so that it reads). Per read: the Worker's CPU (D1's
     * time apart), D1's time and rows read on the replica.
     */
    async idleTailRead(reads: number, at: number) {
      const replica = owners.binding.replica;
      const [d1Before, rowsBefore] = [replica.sqliteMs, replica.rowsRead];
      const realNow = Date.now;
      let cpuMs = 0;
      try {
        for (let i = 0; i < reads; i++) {
          Date.now = () => at + (i + 1) * 1_001;
          const d1 = replica.sqliteMs;
          const begin = performance.now();
          await deliverToTails(ctx, []);
          cpuMs += performance.now() - begin - (replica.sqliteMs - d1);
        }
      } finally {
        Date.now = realNow;
      }
      return {
        cpuMs: cpuMs / reads,
        d1Ms: (replica.sqliteMs - d1Before) / reads,
        rowsRead: (replica.rowsRead - rowsBefore) / reads,
      };
    },
    /** The ledger per POST: calls, rows written and read, CPU; and the bytes a batch's row takes. */
    ledger(posts: number) {
      const all = [...shards.values()];
      const rows = all.reduce((n, sql) => n + sql.rowsWritten().total, 0);
      const bytes = all.reduce((n, sql) => n + sql.bytes(), 0);
      return {
        shards: LEDGER_SHARDS,
        callsPerPost: ledgerCalls / posts,
        rowsWrittenPerPost: rows / posts,
        rowsReadPerPost: all.reduce((n, sql) => n + sql.rowsRead(), 0) / posts,
        cpuMsPerPost: ledgerMs / posts,
        bytesPerPost: bytes / posts,
      };
    },
  };
}
