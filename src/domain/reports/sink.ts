/**
 * Writes a file of unknown length to R2 with bounded memory: bytes fill one fixed buffer of `partSize`, and each
 * full buffer becomes a multipart part. R2 needs every part but the last to be the same size and at least 5 MiB, so
 * parts are cut at exactly `partSize` whatever the chunks written; memory is one part (plus the chunk being copied),
 * whatever the file's size.
 */
export const PART_SIZE = 5 * 1024 * 1024;

export class MultipartSink {
  readonly #bucket: R2Bucket;
  readonly #key: string;
  readonly #httpMetadata: R2HTTPMetadata;
  readonly #buffer: Uint8Array;
  #filled = 0;
  #upload: R2MultipartUpload | null = null;
  readonly #parts: R2UploadedPart[] = [];
  #bytes = 0;
  /** The most bytes held at once (the part buffer's fill): what the memory test checks. */
  peakBuffered = 0;

  constructor(bucket: R2Bucket, key: string, contentType: string, partSize = PART_SIZE) {
    this.#bucket = bucket;
    this.#key = key;
    this.#httpMetadata = { contentType };
    this.#buffer = new Uint8Array(partSize);
  }

  get bytes(): number {
    return this.#bytes;
  }

  get parts(): number {
    return this.#parts.length;
  }

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(chunk.length - offset, this.#buffer.length - this.#filled);
      this.#buffer.set(chunk.subarray(offset, offset + take), this.#filled);
      this.#filled += take;
      offset += take;
      this.peakBuffered = Math.max(this.peakBuffered, this.#filled);
      if (this.#filled === this.#buffer.length) await this.#uploadPart();
    }
    this.#bytes += chunk.length;
  }

  /** Completes the object (a small file is one plain put); returns its size in bytes. */
  async close(): Promise<number> {
    if (!this.#upload) {
      await this.#bucket.put(this.#key, this.#buffer.slice(0, this.#filled), { httpMetadata: this.#httpMetadata });
      return this.#bytes;
    }
    if (this.#filled > 0) await this.#uploadPart();
    await this.#upload.complete(this.#parts);
    return this.#bytes;
  }

  /** Drops a multipart upload that will not be completed. */
  async abort(): Promise<void> {
    await this.#upload?.abort().catch(() => undefined);
  }

  async #uploadPart(): Promise<void> {
    this.#upload ??= await this.#bucket.createMultipartUpload(this.#key, { httpMetadata: this.#httpMetadata });
    const part = await this.#upload.uploadPart(this.#parts.length + 1, this.#buffer.slice(0, this.#filled));
    this.#parts.push(part);
    this.#filled = 0;
  }
}
