import { deflateSync, inflateSync } from "fflate";

/**
 * The store's rows keep their bulk (cells, domains, samples, sessions) as compressed JSON: a Durable Object bills
 * rows written, not bytes, and stores pages, so one compressed blob per bucket is both the cheapest write and the
 * smallest footprint. Deflate level 1: ~4× smaller than the JSON at a fraction of the CPU of the default level.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function packJson(value: unknown): Uint8Array {
  return deflateSync(encoder.encode(JSON.stringify(value)), { level: 1 });
}

/** SQLite hands a BLOB back as an ArrayBuffer in a Durable Object, as a Uint8Array on node:sqlite. */
export function unpackJson<T>(blob: ArrayBuffer | Uint8Array | null | undefined, empty: T): T {
  if (blob === null || blob === undefined) return empty;
  const bytes = blob instanceof Uint8Array ? blob : new Uint8Array(blob);
  if (bytes.length === 0) return empty;
  return JSON.parse(decoder.decode(inflateSync(bytes))) as T;
}
