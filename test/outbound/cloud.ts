/**
 * Fakes of the cloud services report destinations use (Node side, under `*.cloud.test`): AWS STS and S3, and
 * Google's OAuth token, IAM Credentials and Cloud Storage upload endpoints. Unlike s3rver, they check what matters:
 * every AWS request's SigV4 signature is recomputed (STS with our key, S3 with the temporary keys STS issued, with
 * the session token), and the Google token is given only for a JWT signed with our service account's key.
 *
 * Tests read what they received: `GET https://s3.cloud.test/__objects/<bucket>/<key>` (the bytes),
 * `GET https://<host>.cloud.test/__log` (every request: method, path, status, and the STS/IAM parameters).
 * Magic names make failures: a role ARN or service account containing `denied` is refused (403); the S3 bucket
 * `failing-bucket` answers 500 to every PUT.
 */
import { generateKeyPairSync, verify } from "node:crypto";
import { AwsV4Signer } from "aws4fetch";

const OUR_AWS_KEY = { accessKeyId: "AKIDREPORTSTEST00001", secretAccessKey: "our-test-secret-access-key" };
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const OUR_SERVICE_ACCOUNT = "reports@proxy-api-test.iam.gserviceaccount.com";

/** Bindings that point the worker's cloud destinations at these fakes (merged into the vitest config). */
export const cloudTestBindings = {
  AWS_ACCESS_KEY_ID: OUR_AWS_KEY.accessKeyId,
  AWS_SECRET_ACCESS_KEY: OUR_AWS_KEY.secretAccessKey,
  GCP_SERVICE_ACCOUNT_KEY: JSON.stringify({
    client_email: OUR_SERVICE_ACCOUNT,
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
  }),
  STS_ENDPOINT: "https://sts.cloud.test",
  S3_ENDPOINT: "https://s3.cloud.test",
  GCP_TOKEN_ENDPOINT: "https://oauth2.cloud.test/token",
  GCP_IAM_CREDENTIALS_ENDPOINT: "https://iam.cloud.test",
  GCS_UPLOAD_ENDPOINT: "https://gcs.cloud.test",
  API_ORIGIN: "https://api.test",
};

interface LogEntry {
  method: string;
  path: string;
  status: number;
  params?: Record<string, string>;
}

const objects = new Map<string, { bytes: Uint8Array; contentType: string | null }>();
const log = new Map<string, LogEntry[]>();
const sessions = new Map<string, { secretAccessKey: string; sessionToken: string }>();
const multipart = new Map<string, Map<number, Uint8Array>>();
const ourTokens = new Set<string>();
const impersonated = new Set<string>();

const xml = (status: number, body: string) =>
  new Response(`<?xml version="1.0" encoding="UTF-8"?>${body}`, {
    status,
    headers: { "Content-Type": "application/xml" },
  });
const awsError = (status: number, code: string) => xml(status, `<Error><Code>${code}</Code></Error>`);
const json = (status: number, body: unknown) => Response.json(body, { status });

/** Recomputes the request's SigV4 signature with the given keys; true when it matches. */
async function signatureMatches(
  request: Request,
  body: Uint8Array,
  keys: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
): Promise<boolean> {
  const authorization = request.headers.get("authorization") ?? "";
  const match =
    /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]+)/.exec(
      authorization,
    );
  if (!match || match[1] !== keys.accessKeyId) return false;
  const signed = (match[4] as string).split(";").filter((h) => h !== "host");
  const headers = new Headers(signed.map((h) => [h, request.headers.get(h) ?? ""] as [string, string]));
  const signer = new AwsV4Signer({
    method: request.method,
    url: request.url,
    headers,
    body: body.length > 0 ? body : undefined,
    ...keys,
    service: match[3],
    region: match[2],
    datetime: request.headers.get("x-amz-date") ?? "",
  });
  const expected = (await signer.sign()).headers.get("authorization") ?? "";
  return expected.endsWith(`Signature=${match[5]}`);
}

function record(host: string, entry: LogEntry): void {
  log.set(host, [...(log.get(host) ?? []), entry]);
}

async function sts(request: Request, body: Uint8Array): Promise<Response> {
  const params = Object.fromEntries(new URLSearchParams(new TextDecoder().decode(body)));
  const answer = async () => {
    if (!(await signatureMatches(request, body, OUR_AWS_KEY))) return awsError(403, "SignatureDoesNotMatch");
    if (params.Action !== "AssumeRole" || !params.RoleArn || !params.RoleSessionName) {
      return awsError(400, "MissingParameter");
    }
    if (params.RoleArn.includes("denied")) return awsError(403, "AccessDenied");
    const accessKeyId = `ASIA${crypto.randomUUID().replace(/-/g, "").slice(0, 16).toUpperCase()}`;
    const session = { secretAccessKey: crypto.randomUUID(), sessionToken: `token-${crypto.randomUUID()}` };
    sessions.set(accessKeyId, session);
    return xml(
      200,
      `<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>${accessKeyId}</AccessKeyId>` +
        `<SecretAccessKey>${session.secretAccessKey}</SecretAccessKey><SessionToken>${session.sessionToken}</SessionToken>` +
        "</Credentials></AssumeRoleResult></AssumeRoleResponse>",
    );
  };
  const response = await answer();
  record("sts", { method: request.method, path: "/", status: response.status, params });
  return response;
}

async function s3(request: Request, url: URL, body: Uint8Array): Promise<Response> {
  const accessKeyId = /Credential=([^/]+)\//.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const session = sessions.get(accessKeyId);
  // Our own key works without a session (local development without STS: `STS_ENDPOINT=""`).
  const trusted = session
    ? request.headers.get("x-amz-security-token") === session.sessionToken &&
      (await signatureMatches(request, body, { accessKeyId, ...session }))
    : accessKeyId === OUR_AWS_KEY.accessKeyId && (await signatureMatches(request, body, OUR_AWS_KEY));
  if (!trusted) return awsError(403, "SignatureDoesNotMatch");
  const key = decodeURIComponent(url.pathname.slice(1));
  if (key.startsWith("failing-bucket/")) return awsError(500, "InternalError");
  const uploadId = url.searchParams.get("uploadId");
  if (request.method === "POST" && url.searchParams.has("uploads")) {
    const id = crypto.randomUUID();
    multipart.set(id, new Map());
    return xml(200, `<InitiateMultipartUploadResult><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
  }
  if (request.method === "PUT" && uploadId) {
    multipart.get(uploadId)?.set(Number(url.searchParams.get("partNumber")), body);
    return new Response(null, { status: 200, headers: { ETag: `"part-${url.searchParams.get("partNumber")}"` } });
  }
  if (request.method === "POST" && uploadId) {
    const parts = [...(multipart.get(uploadId) ?? new Map()).entries()].sort(([a], [b]) => a - b).map(([, p]) => p);
    objects.set(key, { bytes: Buffer.concat(parts), contentType: request.headers.get("content-type") });
    return xml(200, "<CompleteMultipartUploadResult/>");
  }
  if (request.method === "PUT") {
    objects.set(key, { bytes: body, contentType: request.headers.get("content-type") });
    return new Response(null, { status: 200, headers: { ETag: '"object"' } });
  }
  return awsError(400, "UnsupportedRequest");
}

function verifiedJwt(assertion: string): Record<string, unknown> | null {
  const [header, claims, signature] = assertion.split(".");
  if (!header || !claims || !signature) return null;
  const valid = verify(
    "RSA-SHA256",
    Buffer.from(`${header}.${claims}`),
    publicKey,
    Buffer.from(signature, "base64url"),
  );
  return valid ? JSON.parse(Buffer.from(claims, "base64url").toString()) : null;
}

function oauthToken(body: Uint8Array): Response {
  const params = new URLSearchParams(new TextDecoder().decode(body));
  const claims = verifiedJwt(params.get("assertion") ?? "");
  if (
    params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
    claims?.iss !== OUR_SERVICE_ACCOUNT
  ) {
    return json(400, { error: "invalid_grant" });
  }
  const token = `ours-${crypto.randomUUID()}`;
  ourTokens.add(token);
  return json(200, { access_token: token, token_type: "Bearer", expires_in: 3600 });
}

function generateAccessToken(request: Request, url: URL): Response {
  if (!ourTokens.has((request.headers.get("authorization") ?? "").replace("Bearer ", ""))) {
    return json(401, { error: { message: "Request had invalid authentication credentials." } });
  }
  const email = decodeURIComponent(/serviceAccounts\/([^:]+):generateAccessToken$/.exec(url.pathname)?.[1] ?? "");
  if (email.includes("denied")) {
    return json(403, { error: { message: "Permission 'iam.serviceAccounts.getAccessToken' denied" } });
  }
  const token = `theirs-${email}-${crypto.randomUUID()}`;
  impersonated.add(token);
  return json(200, { accessToken: token, expireTime: new Date(Date.now() + 900_000).toISOString() });
}

function gcsUpload(request: Request, url: URL, body: Uint8Array): Response {
  const token = (request.headers.get("authorization") ?? "").replace("Bearer ", "");
  if (!impersonated.has(token)) return json(401, { error: { message: "Invalid Credentials" } });
  const bucket = decodeURIComponent(/\/b\/([^/]+)\/o$/.exec(url.pathname)?.[1] ?? "");
  const name = url.searchParams.get("name") ?? "";
  objects.set(`${bucket}/${name}`, { bytes: body, contentType: request.headers.get("content-type") });
  return json(200, { bucket, name, size: String(body.length) });
}

function readBack(url: URL): Response {
  if (url.pathname === "/__log") return json(200, log.get(url.hostname.split(".")[0] as string) ?? []);
  const key = decodeURIComponent(url.pathname.slice("/__objects/".length));
  const object = objects.get(key);
  if (!object) return json(404, { error: "no such object" });
  return new Response(object.bytes, { headers: { "Content-Type": object.contentType ?? "application/octet-stream" } });
}

export async function cloudFake(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === "GET" && url.pathname.startsWith("/__")) return readBack(url);
  const body = new Uint8Array(await request.arrayBuffer());
  const service = url.hostname.split(".")[0];
  let response: Response;
  if (service === "sts") return sts(request, body);
  if (service === "s3") response = await s3(request, url, body);
  else if (service === "oauth2") response = oauthToken(body);
  else if (service === "iam") response = generateAccessToken(request, url);
  else if (service === "gcs") response = gcsUpload(request, url, body);
  else response = json(404, { error: "unknown cloud service" });
  record(service as string, { method: request.method, path: url.pathname + url.search, status: response.status });
  return response;
}
