/**
 * Usage reaches the accounts' stores through two queues. The route's messages hold parts of many accounts (a
 * gateway batch); the `usage` queue's consumer forwards each part to its account's shard: one of the queues
 * `usage-accounts-<n>`, bound as `USAGE_ACCOUNTS_<n>` (n from 0), chosen by a hash of the account id. A shard
 * queue's consumer waits up to its batch window for its messages, so each account's store is called about once a
 * window with all of its parts, whatever the number of gateway batches (docs/scale.md). With no shard bound, the
 * `usage` consumer applies the parts itself.
 */
const SHARD_BINDING = /^USAGE_ACCOUNTS_(\d+)$/;

/** The shard queues bound to the worker, in order (`USAGE_ACCOUNTS_0`, `_1`, …). */
export function usageShards(env: Cloudflare.Env): Queue[] {
  return Object.entries(env as unknown as Record<string, unknown>)
    .flatMap(([name, binding]) => {
      const match = SHARD_BINDING.exec(name);
      return match ? [{ index: Number(match[1]), queue: binding as Queue }] : [];
    })
    .sort((a, b) => a.index - b.index)
    .map(({ queue }) => queue);
}

/** The shard of an account (or an account's store) among `count`. */
export { hashShard as shardOf } from "../../platform/sampling";
