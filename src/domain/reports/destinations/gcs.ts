import { base64ToBytes, bytesToBase64Url } from "../../../platform/base64";
import { now } from "../../../platform/clock";
import { base64UrlEncode } from "../../../platform/crypto";
import type { DomainContext } from "../../context";
import { type Delivery, DestinationError, objectName } from "./types";

/**
 * The `gcs` destination: our service account (`GCP_SERVICE_ACCOUNT_KEY`, a JSON key) signs an RS256 JWT for an
 * OAuth token, impersonates the customer's service account through IAM Credentials `generateAccessToken` (the
 * customer grants ours Token Creator on theirs), then uploads the file, streamed from R2, with the JSON API's media
 * upload. Endpoints: `GCP_TOKEN_ENDPOINT`, `GCP_IAM_CREDENTIALS_ENDPOINT`, `GCS_UPLOAD_ENDPOINT`.
 */
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const STORAGE_WRITE_SCOPE = "https://www.googleapis.com/auth/devstorage.read_write";
const encoder = new TextEncoder();

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
}

function serviceAccountKey(ctx: DomainContext): ServiceAccountKey {
  try {
    const key = JSON.parse(ctx.env.GCP_SERVICE_ACCOUNT_KEY) as Partial<ServiceAccountKey>;
    if (key.client_email && key.private_key) return key as ServiceAccountKey;
  } catch {
    // fall through
  }
  throw new DestinationError("gcs: the service has no Google service account configured");
}

async function privateKey(pem: string): Promise<CryptoKey> {
  const der = base64ToBytes(pem.replace(/-----[A-Z ]+-----|\s/g, ""));
  return crypto.subtle.importKey("pkcs8", der, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
}

/** An RS256 JWT assertion for the OAuth 2.0 JWT bearer grant (RFC 7523). */
async function signedAssertion(key: ServiceAccountKey, audience: string): Promise<string> {
  const issuedAt = Math.floor(now() / 1000);
  const header = base64UrlEncode(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const claims = base64UrlEncode(
    JSON.stringify({
      iss: key.client_email,
      scope: CLOUD_PLATFORM_SCOPE,
      aud: audience,
      iat: issuedAt,
      exp: issuedAt + 3600,
    }),
  );
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    await privateKey(key.private_key),
    encoder.encode(`${header}.${claims}`),
  );
  return `${header}.${claims}.${bytesToBase64Url(new Uint8Array(signature))}`;
}

async function jsonOrFail<T>(response: Response, what: string): Promise<T> {
  if (!response.ok) {
    const detail = await response.text().catch(() => "");
    const reason = /"message"\s*:\s*"([^"]{1,200})"/.exec(detail)?.[1] ?? `status ${response.status}`;
    throw new DestinationError(`gcs: ${what} failed (${reason})`);
  }
  return (await response.json()) as T;
}

async function ourAccessToken(ctx: DomainContext): Promise<string> {
  const assertion = await signedAssertion(serviceAccountKey(ctx), ctx.env.GCP_TOKEN_ENDPOINT);
  const response = await fetch(ctx.env.GCP_TOKEN_ENDPOINT, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }).toString(),
  });
  return (await jsonOrFail<{ access_token: string }>(response, "obtaining our token")).access_token;
}

async function impersonate(ctx: DomainContext, serviceAccountEmail: string): Promise<string> {
  const url = `${ctx.env.GCP_IAM_CREDENTIALS_ENDPOINT}/v1/projects/-/serviceAccounts/${encodeURIComponent(serviceAccountEmail)}:generateAccessToken`;
  const response = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${await ourAccessToken(ctx)}`, "Content-Type": "application/json" },
    body: JSON.stringify({ scope: [STORAGE_WRITE_SCOPE], lifetime: "900s" }),
  });
  return (await jsonOrFail<{ accessToken: string }>(response, `impersonating ${serviceAccountEmail}`)).accessToken;
}

export async function uploadToGcs(ctx: DomainContext, delivery: Delivery): Promise<void> {
  const destination = delivery.report.destination;
  if (destination.type !== "gcs") throw new DestinationError("not a gcs destination");
  const token = await impersonate(ctx, destination.serviceAccountEmail);
  const file = await ctx.env.REPORTS.get(delivery.run.fileKey);
  if (!file) throw new DestinationError("the report file is missing");
  const url = new URL(`${ctx.env.GCS_UPLOAD_ENDPOINT}/upload/storage/v1/b/${encodeURIComponent(destination.bucket)}/o`);
  url.searchParams.set("uploadType", "media");
  url.searchParams.set("name", objectName(destination.prefix, delivery));
  const response = await fetch(url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": delivery.contentType,
      "Content-Length": String(file.size),
    },
    body: file.body,
  });
  await jsonOrFail(response, "the upload");
}
