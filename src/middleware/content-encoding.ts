import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";

/** Decoded bodies are bounded: a usage batch of 1,000 records is well under 2 MB. */
const MAX_DECODED_BYTES = 4_000_000;

/**
 * Accepts `Content-Encoding: gzip` request bodies: the decoded text is what the JSON-body check and the
 * validators then read. Other encodings are 400 `invalid_json`; a body that decodes past 4 MB is 413.
 */
export const decodeBody = createMiddleware<AppEnv>(async (c, next) => {
  const encoding = c.req.header("Content-Encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    if (encoding !== "gzip") {
      throw new ApiError("invalid_json", `Content-Encoding ${encoding} is not supported; send gzip or no encoding.`);
    }
    const text = await gunzip(c.req.raw.body);
    const headers = new Headers(c.req.raw.headers);
    headers.delete("Content-Encoding");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, body: text });
  }
  await next();
});

async function gunzip(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return "";
  const reader = body.pipeThrough(new DecompressionStream("gzip")).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_DECODED_BYTES) throw new ApiError("payload_too_large");
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_json", "The body is not valid gzip.");
  }
  // One decode of the whole body: decoding chunk by chunk and concatenating costs more than the copy.
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
