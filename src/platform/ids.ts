import { decodeTime, encodeTime, monotonicFactory } from "ulid";

/** Resource id prefixes (spec §1), plus the platform's own (`key_`, `wl_`). */
export const idPrefixes = {
  account: "usr",
  apiKey: "key",
  auditEvent: "aud",
  subuser: "sub",
  batch: "bat",
  order: "ord",
  subscription: "sbn",
  session: "ses",
  request: "req",
  report: "rep",
  run: "run",
  ledgerEntry: "led",
  ip: "ip",
  event: "evt",
  replacement: "rpl",
  whitelist: "wl",
  proxyTest: "pxt",
  webhookEndpoint: "whe",
  webhookDelivery: "whd",
  trafficSpike: "spk",
  trafficSpikeDigest: "spd",
  gatewayNode: "gwn",
  member: "mem",
  memberSession: "msn",
  invitation: "inv",
  passwordReset: "pwr",
  mail: "eml",
  oauthGrant: "oag",
  passkey: "pky",
} as const;

export type IdKind = keyof typeof idPrefixes;

/**
 * ULIDs' randomness, drawn from the platform's CSPRNG 4 KB at a time: the library otherwise makes one
 * `getRandomValues` call per character, 16 per id. A byte / 256 picks each of the 32 characters evenly.
 */
const randomBytes = new Uint8Array(4096);
let nextByte = randomBytes.length;
function randomFraction(): number {
  if (nextByte === randomBytes.length) {
    crypto.getRandomValues(randomBytes);
    nextByte = 0;
  }
  return (randomBytes[nextByte++] as number) / 256;
}

const nextUlid = monotonicFactory(randomFraction);

/** `usr_01J…`: a ULID (monotonic within a millisecond) behind the resource's prefix. */
export function newId(kind: IdKind, time?: number): string {
  return `${idPrefixes[kind]}_${nextUlid(time)}`;
}

const ulidPattern = "[0-9A-HJKMNP-TV-Z]{26}";

const idPatterns = new Map(
  Object.entries(idPrefixes).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_${ulidPattern}$`)]),
);

export function isId(kind: IdKind, value: string): boolean {
  return idPatterns.get(kind)!.test(value);
}

/**
 * The one id of `kind` that a change to resource `sourceId` at `time` has: the time, then the resource's own ULID
 * randomness. For a record that a retry may write again (the write is then ignored).
 */
export function idAt(kind: IdKind, time: number, sourceId: string): string {
  return `${idPrefixes[kind]}_${encodeTime(time, 10)}${sourceId.slice(-16)}`;
}

const ULID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * An id whose ULID time is exactly `time` (a monotonic id may run ahead of the clock when ids are made faster than
 * milliseconds pass, or the clock steps back): for ids whose time others read back, such as a session's start.
 */
export function newIdAt(kind: IdKind, time: number): string {
  let random = "";
  for (let i = 0; i < 16; i++) random += ULID_ALPHABET[Math.floor(randomFraction() * 32)];
  return `${idPrefixes[kind]}_${encodeTime(time, 10)}${random}`;
}

/** The time (ms) a ULID id was made at (`ses_01J…` → when its session started). */
export function timeOfId(id: string): number {
  return decodeTime(id.slice(id.indexOf("_") + 1));
}

/** The smallest id of `kind` a ULID of `time` can have: ids below it were made earlier (a keyset time boundary). */
export function firstIdAt(kind: IdKind, time: number): string {
  return `${idPrefixes[kind]}_${encodeTime(time, 10)}${"0".repeat(16)}`;
}
