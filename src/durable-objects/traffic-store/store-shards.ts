import { hashShard } from "../../platform/sampling";

/**
 * A busy account's traffic is kept in several stores, split by sub-user (docs/scale.md, "Re-sharding an account"):
 * `accounts.traffic_shards` of them, a power of two that only doubles. Shard 0 is the store named by the account id
 * (every account's store from before sharding); shard k is `<accountId>/<k>`.
 */
export const MAX_TRAFFIC_SHARDS = 64;

/** The Durable Object name of an account's shard. */
export function storeName(accountId: string, shard: number): string {
  return shard === 0 ? accountId : `${accountId}/${shard}`;
}

/** The shard a sub-user's usage goes to while its account has `shards` stores. */
export function subuserShard(subuserId: string, shards: number): number {
  return hashShard(subuserId, shards);
}

/**
 * Every shard a sub-user's usage may have gone to while its account grew to `shards` (its shard at `shards`,
 * `shards / 2`, …, 1): the count only doubles, and halving the count halves the shard, so they are `k, k >> 1, … 0`.
 */
export function historicShards(subuserId: string, shards: number): number[] {
  const found: number[] = [];
  for (let shard = subuserShard(subuserId, shards); ; shard >>= 1) {
    found.push(shard);
    if (shard === 0) return found;
  }
}

/** Whether `shards` is a count an account may have: a power of two from 1 to `MAX_TRAFFIC_SHARDS`. */
export function isShardCount(shards: number): boolean {
  return Number.isInteger(shards) && shards >= 1 && shards <= MAX_TRAFFIC_SHARDS && (shards & (shards - 1)) === 0;
}
