import { HOUR, now } from "../../platform/clock";
import { derivedHmacKey, toHex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";

/**
 * Report files are downloaded through a link the worker signs itself, so it works without an API key, in tests, in
 * `wrangler dev` and in production alike: `/v1/reports/runs/{id}/download?exp=<unix s>&sig=<hex HMAC-SHA256>` over
 * `"{run id}\n{exp}"`. The HMAC key is derived from `SEALING_KEY` (HKDF, its own label), so no further secret is
 * needed and rotating the sealing key also voids every outstanding link. A link is valid for 1 hour (spec §8.5);
 * a fresh one is minted on every read of the run.
 */
export const DOWNLOAD_LINK_TTL_MS = HOUR;
const encoder = new TextEncoder();
const LABEL = "report-download-link/v1";

function signedContent(runId: string, expSeconds: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(`${runId}\n${expSeconds}`));
}

export function downloadPath(runId: string): string {
  return `/v1/reports/runs/${runId}/download`;
}

/**
 * A download link valid for an hour from now, and when it expires (epoch ms), on `origin`: the origin an API request
 * came to when the link is part of its answer (the caller reached the API there, on any host or port), `API_ORIGIN`
 * when it leaves without a request (a mail, a webhook: see docs/decisions.md).
 */
export async function signDownloadLink(
  env: Cloudflare.Env,
  runId: string,
  origin: string,
): Promise<{ url: string; expiresAt: number }> {
  const expSeconds = Math.floor((now() + DOWNLOAD_LINK_TTL_MS) / 1000);
  const signature = await crypto.subtle.sign(
    "HMAC",
    await derivedHmacKey(env.SEALING_KEY, LABEL),
    signedContent(runId, expSeconds),
  );
  const url = new URL(downloadPath(runId), origin);
  url.searchParams.set("exp", String(expSeconds));
  url.searchParams.set("sig", toHex(signature));
  return { url: url.toString(), expiresAt: expSeconds * 1000 };
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

/** 403 `download_link_invalid` unless the link was signed by us for this run; then 410 once it has expired. */
export async function verifyDownloadLink(
  env: Cloudflare.Env,
  runId: string,
  link: { exp: string; sig: string },
): Promise<void> {
  const expSeconds = Number(link.exp);
  const wellFormed = /^\d{1,12}$/.test(link.exp) && /^[0-9a-f]{64}$/.test(link.sig);
  const valid =
    wellFormed &&
    (await crypto.subtle.verify(
      "HMAC",
      await derivedHmacKey(env.SEALING_KEY, LABEL),
      hexToBytes(link.sig),
      signedContent(runId, expSeconds),
    ));
  if (!valid) throw new ApiError("download_link_invalid");
  if (now() >= expSeconds * 1000) throw new ApiError("download_link_expired");
}
