import type { FirstPost, UsageBatchLedger } from "./usage-batch-ledger";

/** Shards when `USAGE_LEDGER_SHARDS` is unset or not a whole number of at least 1. */
const DEFAULT_SHARDS = 16;

/** The typed client of one shard of the usage batch ledger, `usage-batches-<shard>`. */
export class UsageBatchLedgerClient {
  readonly #stub: DurableObjectStub<UsageBatchLedger>;

  constructor(env: Cloudflare.Env, shard: number) {
    this.#stub = env.USAGE_BATCH_LEDGER.get(env.USAGE_BATCH_LEDGER.idFromName(`usage-batches-${shard}`));
  }

  /** The first post of a batch within the last 7 days, or null. */
  recall(batchId: string): Promise<FirstPost | null> {
    return this.#stub.recall(batchId);
  }

  /** Records a batch's first post unless one is: the stored first post, and whether this call stored it. */
  record(batchId: string, post: FirstPost): Promise<{ first: FirstPost; recorded: boolean }> {
    return this.#stub.record(batchId, post);
  }
}

/** How many shards the ledger has (`USAGE_LEDGER_SHARDS`). */
export function ledgerShards(env: Cloudflare.Env): number {
  const shards = Number(env.USAGE_LEDGER_SHARDS);
  return Number.isInteger(shards) && shards >= 1 ? shards : DEFAULT_SHARDS;
}
