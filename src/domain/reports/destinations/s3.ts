import { AwsClient } from "aws4fetch";
import type { DomainContext } from "../../context";
import { type Delivery, DestinationError, objectName, readRange, xmlValue } from "./types";

/**
 * The `s3` destination: assume the customer's role with STS (our identity, `ExternalId` = the customer's account
 * id, 15-minute session), then write the object with aws4fetch — one PUT up to one part, else a multipart upload
 * whose parts are read from R2 one at a time. aws4fetch retries 5xx and 429 ten times by default (minutes of
 * backoff): `retries` is set low. Endpoints come from `STS_ENDPOINT` and `S3_ENDPOINT` (`{region}` replaced).
 * An empty `STS_ENDPOINT` (local development only) skips the role and signs with our own keys, so a local
 * S3-compatible server (s3rver, MinIO, miniflare's R2 S3 endpoint) can stand in for S3.
 */
export const AWS_RETRIES = 2;
/** Above this the object goes up in parts of this size (S3 parts: 5 MiB-5 GiB, all but the last the same size). */
export const S3_PART_SIZE = 8 * 1024 * 1024;
const UNSIGNED = { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

async function assumeRole(ctx: DomainContext, roleArn: string, delivery: Delivery): Promise<Credentials> {
  if (!ctx.env.AWS_ACCESS_KEY_ID || !ctx.env.AWS_SECRET_ACCESS_KEY) {
    throw new DestinationError("s3: the service has no AWS identity configured");
  }
  if (ctx.env.STS_ENDPOINT === "") {
    return { accessKeyId: ctx.env.AWS_ACCESS_KEY_ID, secretAccessKey: ctx.env.AWS_SECRET_ACCESS_KEY };
  }
  const sts = new AwsClient({
    accessKeyId: ctx.env.AWS_ACCESS_KEY_ID,
    secretAccessKey: ctx.env.AWS_SECRET_ACCESS_KEY,
    service: "sts",
    region: "us-east-1",
    retries: AWS_RETRIES,
  });
  const form = new URLSearchParams({
    Action: "AssumeRole",
    Version: "2011-06-15",
    RoleArn: roleArn,
    RoleSessionName: `report-${delivery.run.id}`,
    ExternalId: delivery.run.accountId,
    DurationSeconds: "900",
  });
  const response = await sts.fetch(ctx.env.STS_ENDPOINT, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  const xml = await response.text();
  const credentials = {
    accessKeyId: xmlValue(xml, "AccessKeyId"),
    secretAccessKey: xmlValue(xml, "SecretAccessKey"),
    sessionToken: xmlValue(xml, "SessionToken"),
  };
  if (!response.ok || !credentials.accessKeyId || !credentials.secretAccessKey || !credentials.sessionToken) {
    const code = xmlValue(xml, "Code") ?? `status ${response.status}`;
    throw new DestinationError(`s3: could not assume ${roleArn} (${code})`);
  }
  return credentials as Credentials;
}

async function checked(response: Response, what: string): Promise<Response> {
  if (response.ok) return response;
  const code = xmlValue(await response.text(), "Code") ?? `status ${response.status}`;
  throw new DestinationError(`s3: ${what} failed (${code})`);
}

export async function uploadToS3(ctx: DomainContext, delivery: Delivery): Promise<void> {
  const destination = delivery.report.destination;
  if (destination.type !== "s3") throw new DestinationError("not an s3 destination");
  const s3 = new AwsClient({
    ...(await assumeRole(ctx, destination.roleArn, delivery)),
    service: "s3",
    region: destination.region,
    retries: AWS_RETRIES,
  });
  const key = objectName(destination.prefix, delivery).split("/").map(encodeURIComponent).join("/");
  const url = `${ctx.env.S3_ENDPOINT.replace("{region}", destination.region)}/${destination.bucket}/${key}`;
  const { bytes, fileKey } = delivery.run;
  if (bytes <= S3_PART_SIZE) {
    const body = await readRange(ctx.env.REPORTS, fileKey, 0, bytes);
    const headers = { ...UNSIGNED, "Content-Type": delivery.contentType };
    await checked(await s3.fetch(url, { method: "PUT", headers, body }), "PUT");
    return;
  }
  await multipartUpload(ctx, s3, url, delivery);
}

async function multipartUpload(ctx: DomainContext, s3: AwsClient, url: string, delivery: Delivery): Promise<void> {
  const created = await checked(
    await s3.fetch(`${url}?uploads`, {
      method: "POST",
      headers: { ...UNSIGNED, "Content-Type": delivery.contentType },
    }),
    "starting the multipart upload",
  );
  const uploadId = xmlValue(await created.text(), "UploadId");
  if (!uploadId) throw new DestinationError("s3: the multipart upload has no id");
  const upload = `uploadId=${encodeURIComponent(uploadId)}`;
  try {
    const parts: string[] = [];
    for (let offset = 0, part = 1; offset < delivery.run.bytes; offset += S3_PART_SIZE, part++) {
      const body = await readRange(
        ctx.env.REPORTS,
        delivery.run.fileKey,
        offset,
        Math.min(S3_PART_SIZE, delivery.run.bytes - offset),
      );
      const response = await checked(
        await s3.fetch(`${url}?partNumber=${part}&${upload}`, { method: "PUT", headers: UNSIGNED, body }),
        `part ${part}`,
      );
      parts.push(`<Part><PartNumber>${part}</PartNumber><ETag>${response.headers.get("ETag") ?? ""}</ETag></Part>`);
    }
    const body = `<CompleteMultipartUpload>${parts.join("")}</CompleteMultipartUpload>`;
    await checked(
      await s3.fetch(`${url}?${upload}`, { method: "POST", headers: UNSIGNED, body }),
      "completing the upload",
    );
  } catch (error) {
    await s3.fetch(`${url}?${upload}`, { method: "DELETE", headers: UNSIGNED }).catch(() => undefined);
    throw error;
  }
}
