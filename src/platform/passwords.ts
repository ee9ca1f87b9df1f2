import { base64UrlToBytes, bytesToBase64Url } from "./base64";

/**
 * Members' passwords: PBKDF2-HMAC-SHA-256 over an HMAC of the password under a server-side pepper.
 *
 * - Production Workers refuse PBKDF2 above 100,000 iterations (local workerd does not enforce it), so the count is
 *   exactly the cap, and a stored count above it is refused before anything is derived.
 * - The pepper (`PASSWORD_PEPPER`, a secret, `<version>:<secret>`) compensates for the count OWASP finds low: a
 *   stolen database alone cannot be brute-forced. Its version is stored with each hash, so it can be rotated: the
 *   previous one (`PASSWORD_PEPPER_PREVIOUS`) still verifies, and a hash made with it is remade at the next
 *   sign-in.
 * - A hash describes itself: `pbkdf2-sha256$<iterations>$p<pepper version>$<salt>$<key>` (base64url, 16-byte salt,
 *   32-byte key), so its parameters can change without a migration.
 */

export const PBKDF2_MAX_ITERATIONS = 100_000;
const PBKDF2_ITERATIONS = PBKDF2_MAX_ITERATIONS;
const SCHEME = "pbkdf2-sha256";
const SALT_BYTES = 16;
const KEY_BYTES = 32;
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

export interface Pepper {
  version: number;
  secret: string;
}

export interface ParsedHash {
  iterations: number;
  pepperVersion: number;
  salt: Uint8Array;
  key: Uint8Array;
}

const HASH_PATTERN = /^pbkdf2-sha256\$([1-9]\d{0,9})\$p([1-9]\d{0,5})\$([A-Za-z0-9_-]{22})\$([A-Za-z0-9_-]{43})$/;

/** A stored hash's parameters, or null when it is not one this code wrote (or exceeds the runtime's cap). */
export function parsePasswordHash(stored: string): ParsedHash | null {
  const match = HASH_PATTERN.exec(stored);
  if (!match) return null;
  const iterations = Number(match[1]);
  if (iterations > PBKDF2_MAX_ITERATIONS) return null;
  return {
    iterations,
    pepperVersion: Number(match[2]),
    salt: base64UrlToBytes(match[3] as string),
    key: base64UrlToBytes(match[4] as string),
  };
}

export function formatPasswordHash(hash: ParsedHash): string {
  return `${SCHEME}$${hash.iterations}$p${hash.pepperVersion}$${bytesToBase64Url(hash.salt)}$${bytesToBase64Url(hash.key)}`;
}

/** `<version>:<secret>` (a secret's value) as a pepper; null when malformed. */
export function parsePepper(value: string | undefined): Pepper | null {
  const match = /^([1-9]\d{0,5}):(.{16,})$/s.exec(value ?? "");
  return match ? { version: Number(match[1]), secret: match[2] as string } : null;
}

export async function hashPassword(password: string, pepper: Pepper): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const key = await derive(password, pepper, salt, PBKDF2_ITERATIONS);
  return formatPasswordHash({ iterations: PBKDF2_ITERATIONS, pepperVersion: pepper.version, salt, key });
}

/**
 * Whether `password` matches `stored`, and whether the hash should be remade (older parameters or pepper). A hash
 * this code cannot read, above the cap, or of a pepper no longer configured never matches.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  peppers: Pepper[],
): Promise<{ ok: boolean; rehash: boolean }> {
  const parsed = parsePasswordHash(stored);
  const pepper = parsed && peppers.find((candidate) => candidate.version === parsed.pepperVersion);
  if (!parsed || !pepper || parsed.key.length !== KEY_BYTES) return { ok: false, rehash: false };
  const key = await derive(password, pepper, parsed.salt, parsed.iterations);
  const ok = crypto.subtle.timingSafeEqual(key, parsed.key);
  const current = peppers[0];
  return { ok, rehash: ok && (parsed.iterations !== PBKDF2_ITERATIONS || pepper.version !== current?.version) };
}

/** The same work as a verification, for an address with no member: the answer takes as long either way. */
export async function spendVerification(pepper: Pepper): Promise<void> {
  await derive("", pepper, new Uint8Array(SALT_BYTES), PBKDF2_ITERATIONS);
}

const encoder = new TextEncoder();
const pepperKeys = new Map<string, Promise<CryptoKey>>();

function pepperKey(secret: string): Promise<CryptoKey> {
  let key = pepperKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    pepperKeys.set(secret, key);
  }
  return key;
}

async function derive(password: string, pepper: Pepper, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  if (iterations > PBKDF2_MAX_ITERATIONS) throw new Error(`PBKDF2 above ${PBKDF2_MAX_ITERATIONS} iterations`);
  const peppered = await crypto.subtle.sign("HMAC", await pepperKey(pepper.secret), encoder.encode(password));
  const base = await crypto.subtle.importKey("raw", peppered, "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    base,
    KEY_BYTES * 8,
  );
  return new Uint8Array(bits);
}
