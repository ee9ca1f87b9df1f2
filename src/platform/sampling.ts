/**
 * A string's place in [0, 1), uniform and deterministic (FNV-1a, 32 bits): the same id always decides the same way,
 * so a retried or redelivered batch samples exactly what its first delivery did. Different `seed`s give independent
 * decisions over the same ids.
 */
export function uniformHash(id: string, seed = 0x811c9dc5): number {
  let hash = seed;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}
