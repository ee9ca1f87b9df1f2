import { uniformHash } from "./sampling.ts";

/**
 * Sticky sessions decided at the node (docs/gateway.md, "Sticky sessions"): every gateway node computes a session's
 * exit from what it already holds — the session key (the full gateway username), the key's generation (which only
 * termination changes, sent in the sub-user's snapshot) and the exits it can use — so that every node gives the same
 * answer with no call. Rendezvous hashing: each candidate exit is scored against the key and the highest wins, so an
 * exit that leaves the pool moves only the sessions it held. A new generation excludes the exit of the one before,
 * so a terminated session always gets a new exit. Pure, with no imports beyond `sampling`: gateway nodes run this
 * file as it is, and the API runs it for the sandbox.
 */

/** The session key: the full gateway username, case-insensitive (spec §3.3). */
export function sessionKey(username: string): string {
  return username.toLowerCase();
}

/** A key's short, stable name (16 hex characters): how a snapshot names the keys whose generation moved. */
export function keyHash(key: string): string {
  return hex8(uniformHash(key, 0x5e551)) + hex8(uniformHash(key, 0x5e552));
}

/** The generation of `key` that a sub-user's snapshot gives (0 unless a termination moved it). */
export function generationOf(generations: Readonly<Record<string, number>> | undefined, key: string): number {
  return generations?.[keyHash(key)] ?? 0;
}

/**
 * The exit of generation `generation` of `key` among `candidates` (null: none). Generation 0 is the highest-scoring
 * candidate; each later one is the highest-scoring candidate other than the previous generation's exit, so that
 * terminating a session always moves its username to a new exit (when there are two or more candidates).
 */
export function stickyExit(candidates: readonly string[], key: string, generation: number): string | null {
  let previous: string | null = null;
  let exit: string | null = null;
  for (let g = 0; g <= generation; g++) {
    exit = highestScoring(candidates, `${key}\n${g}`, previous);
    previous = exit;
  }
  return exit;
}

function highestScoring(candidates: readonly string[], seed: string, excluded: string | null): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const candidate of candidates) {
    if (candidate === excluded && candidates.length > 1) continue;
    const score = uniformHash(`${seed}\n${candidate}`);
    if (score > bestScore || (score === bestScore && best !== null && candidate < best)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The id of the session of `key`'s generation `generation` that started at `startedAt` (ms): `ses_` and a ULID whose
 * time is the start and whose randomness is a hash of the three, so whoever names the session from its usage names it
 * alike, and keyset paging by id still orders sessions by start.
 */
export function sessionIdAt(key: string, generation: number, startedAt: number): string {
  let time = "";
  let rest = Math.max(0, Math.floor(startedAt));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const seed = `${key}\n${generation}\n${startedAt}`;
  let random = "";
  for (let part = 0; part < 4; part++) {
    let bits = Math.floor(uniformHash(seed, part + 1) * 0x1_0000_0000);
    for (let i = 0; i < 4; i++) {
      random += CROCKFORD[bits & 31];
      bits >>>= 5;
    }
  }
  return `ses_${time}${random}`;
}

function hex8(fraction: number): string {
  return Math.floor(fraction * 0x1_0000_0000)
    .toString(16)
    .padStart(8, "0");
}
