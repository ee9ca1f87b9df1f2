import { base64ToBytes, bytesToBase64 } from "./base64";

/**
 * Standard Webhooks 1.0 (https://www.standardwebhooks.com): the one signer for every outbound signed request —
 * webhook endpoint deliveries and report destinations alike.
 *
 * Headers: `webhook-id` (stable across retries), `webhook-timestamp` (unix seconds of this attempt) and
 * `webhook-signature`: `v1,<base64 HMAC-SHA256(secret, "{id}.{timestamp}.{body}")>`, one per secret, space-separated
 * (two during a secret rotation).
 */

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

/** A new signing secret: 32 random bytes, base64, behind `whsec_`. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
}

export function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(SECRET_PREFIX)) return false;
  try {
    const length = base64ToBytes(value.slice(SECRET_PREFIX.length)).length;
    return length >= 24 && length <= 64;
  } catch {
    return false;
  }
}

async function signOne(secret: string, content: Uint8Array<ArrayBuffer>): Promise<string> {
  const raw = base64ToBytes(secret.slice(SECRET_PREFIX.length));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `v1,${bytesToBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, content)))}`;
}

/** The three Standard Webhooks headers for `body`, signed with every secret given (old and new while rotating). */
export async function webhookHeaders(
  secrets: string[],
  message: { id: string; timestamp: number; body: string },
): Promise<Record<string, string>> {
  const seconds = Math.floor(message.timestamp / 1000);
  const content = new Uint8Array(encoder.encode(`${message.id}.${seconds}.${message.body}`));
  const signatures = await Promise.all(secrets.map((secret) => signOne(secret, content)));
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": signatures.join(" "),
  };
}
