import type { ReportRow, ReportRunRow } from "../../../db/schema";

/** What a destination gets: the finished run, its definition and a fresh download link. */
export interface Delivery {
  report: ReportRow;
  run: ReportRunRow & { fileKey: string; rows: number; bytes: number };
  downloadUrl: string;
  expiresAt: number;
  fileName: string;
  contentType: string;
}

/** A destination failure: the run is marked `failed` with this reason; the file stays in R2. */
export class DestinationError extends Error {
  override name = "DestinationError";
}

/** `<prefix><report id>/<run id>.<ext>`: the object name in a customer's bucket. */
export function objectName(prefix: string, delivery: Delivery): string {
  return `${prefix}${delivery.report.id}/${delivery.fileName}`;
}

/** The text of the first `<name>` element of an XML answer (STS, S3), or null. */
export function xmlValue(xml: string, name: string): string | null {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null;
}

/** Reads a byte range of the stored file (parts of a large upload are read one at a time). */
export async function readRange(bucket: R2Bucket, key: string, offset: number, length: number): Promise<ArrayBuffer> {
  const object = await bucket.get(key, { range: { offset, length } });
  if (!object) throw new DestinationError("the report file is missing");
  return object.arrayBuffer();
}
