/**
 * Standing shares (docs/gateway.md, "Standing shares"): while a sub-user is quiet, each of the fleet's `slots`
 * node slots may use a fixed part of each of its limits without asking its gate. The parts sum to the limit
 * exactly; the units that do not divide evenly go to consecutive slots from a point set by the sub-user's name, so
 * that different sub-users' spare units land on different nodes. Pure, with no imports: gateway nodes run this file
 * as it is, so both sides split alike.
 */

/** Slot `slot`'s part of `limit` for the sub-user `name` (0 for a slot outside the fleet's). */
export function standingShare(limit: number, slots: number, slot: number, name: string): number {
  if (slots < 1 || slot < 0 || slot >= slots) return 0;
  const spare = limit % slots;
  const from = nameHash(name) % slots;
  return Math.floor(limit / slots) + ((slot - from + slots) % slots < spare ? 1 : 0);
}

/** FNV-1a over the name's UTF-16 code units: stable across processes and languages that follow it. */
function nameHash(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A node pings the change feed this often; each pong vouches that it has read every push sent before it. */
export const STANDING_PING_MS = 250;
/**
 * A node uses standing shares only until this long after sending the last ping answered: a node that missed a push
 * (its socket died) stops within this of the push being sent.
 */
export const STANDING_VOUCHED_MS = 750;
/** How long after the push that ends standing shares a gate still counts them: the above, and room for timers. */
export const STANDING_GRACE_MS = STANDING_VOUCHED_MS + 250;
