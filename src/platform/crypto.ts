import { base64ToBytes, base64UrlToBytes, bytesToBase64, bytesToBase64Url } from "./base64";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const encoder = new TextEncoder();

/** The most bytes `getRandomValues` fills in one call. */
const MAX_RANDOM_BYTES = 65_536;

/** A uniformly random string over `alphabet` (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet = BASE62): string {
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    const wanted = Math.min((length - out.length) * 2, MAX_RANDOM_BYTES);
    for (const byte of crypto.getRandomValues(new Uint8Array(wanted))) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  let hex = "";
  for (const byte of new Uint8Array(bytes)) hex += HEX_BYTES[byte];
  return hex;
}

/**
 * SHA-256 hex digest. The standard hash for high-entropy generated secrets
 * (API keys, generated passwords, recovery codes): a brute force over their
 * entropy is infeasible, so a slow KDF would only add latency.
 */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

/** Constant-time comparison of two strings of any length (compares their digests). */
export async function timingSafeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(da, db);
}

export function base64UrlEncode(value: string): string {
  return bytesToBase64Url(encoder.encode(value));
}

export function base64UrlDecode(value: string): string {
  return new TextDecoder().decode(base64UrlToBytes(value));
}

const sealingKeys = new Map<string, Promise<CryptoKey>>();

function sealingKey(secret: string): Promise<CryptoKey> {
  let key = sealingKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", base64ToBytes(secret), "AES-GCM", false, ["encrypt", "decrypt"]);
    sealingKeys.set(secret, key);
  }
  return key;
}

/** Encrypts a secret that must be read back later (e.g. a TOTP seed) with AES-256-GCM. */
export async function seal(plaintext: string, sealingSecret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const cipher = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await sealingKey(sealingSecret),
    encoder.encode(plaintext),
  );
  return `v1.${bytesToBase64(iv)}.${bytesToBase64(new Uint8Array(cipher))}`;
}

export async function unseal(sealed: string, sealingSecret: string): Promise<string> {
  const [version, iv, cipher] = sealed.split(".");
  if (version !== "v1" || !iv || !cipher) throw new Error("Unsupported sealed value");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: base64ToBytes(iv) },
    await sealingKey(sealingSecret),
    base64ToBytes(cipher),
  );
  return new TextDecoder().decode(plain);
}

const derivedKeys = new Map<string, Promise<CryptoKey>>();

/**
 * An HMAC-SHA256 key derived from `SEALING_KEY` by HKDF under `label`: each use (download links, usage owner tags)
 * its own key, with no further secret; rotating the sealing key voids them all.
 */
export function derivedHmacKey(sealingKey: string, label: string): Promise<CryptoKey> {
  const cacheKey = `${label}\n${sealingKey}`;
  let key = derivedKeys.get(cacheKey);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", base64ToBytes(sealingKey), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(label) },
        base,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign", "verify"],
      );
    })();
    derivedKeys.set(cacheKey, key);
  }
  return key;
}
