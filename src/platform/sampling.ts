/**
 * A string's place in [0, 1), uniform and deterministic: the same id always decides the same way, so a retried or
 * redelivered batch samples exactly what its first delivery did. Different `seed`s give independent decisions over
 * the same ids. FNV-1a over the characters, then MurmurHash3's finalizer so that ids differing only in their last
 * characters (ULIDs, counters) still spread over the whole range.
 */
export function uniformHash(id: string, seed = 0): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= seed;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 0x1_0000_0000;
}

/** Which of `count` shards an id falls in, by `uniformHash`: halving `count` halves the shard (`k >> 1`). */
export function hashShard(id: string, count: number): number {
  return Math.floor(uniformHash(id) * count);
}
