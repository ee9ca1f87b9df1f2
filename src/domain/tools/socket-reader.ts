const CRLF2 = new Uint8Array([13, 10, 13, 10]);

/** The probe gave up: `code` becomes the result's `error_code`. */
export class ProbeFailure extends Error {
  readonly code: "gateway-unreachable" | "timeout" | "protocol-error";

  constructor(code: ProbeFailure["code"]) {
    super(code);
    this.code = code;
  }
}

export interface ResponseHead {
  status: number;
  headers: Headers;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Reads a socket's bytes by exact counts, HTTP heads and bounded bodies. */
export class SocketReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buffer = new Uint8Array(0);
  #ended = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** Waits for more bytes; false at the end of the stream. */
  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const { value, done } = await this.#reader.read();
    if (done) {
      this.#ended = true;
      return false;
    }
    const merged = new Uint8Array(this.#buffer.length + value.length);
    merged.set(this.#buffer);
    merged.set(value, this.#buffer.length);
    this.#buffer = merged;
    return true;
  }

  #take(n: number): Uint8Array {
    const out = this.#buffer.slice(0, n);
    this.#buffer = this.#buffer.slice(n);
    return out;
  }

  /** Resolves when at least one byte is waiting (the first byte of an answer). */
  async waitForData(): Promise<void> {
    while (this.#buffer.length === 0) if (!(await this.#fill())) throw new ProbeFailure("protocol-error");
  }

  async exactly(n: number): Promise<Uint8Array> {
    while (this.#buffer.length < n) if (!(await this.#fill())) throw new ProbeFailure("protocol-error");
    return this.#take(n);
  }

  /** An HTTP/1.x status line and headers. */
  async head(maxBytes = 16_384): Promise<ResponseHead> {
    let end = indexOf(this.#buffer, CRLF2);
    while (end < 0) {
      if (this.#buffer.length > maxBytes || !(await this.#fill())) throw new ProbeFailure("protocol-error");
      end = indexOf(this.#buffer, CRLF2);
    }
    const [statusLine = "", ...lines] = new TextDecoder().decode(this.#take(end + 4)).split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!status) throw new ProbeFailure("protocol-error");
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    return { status: Number(status[1]), headers };
  }

  /** The body: `length` bytes when known, else up to the end of the stream; at most `maxBytes`. */
  async body(length: number | null, maxBytes = 65_536): Promise<Uint8Array> {
    const want = Math.min(length ?? maxBytes, maxBytes);
    while (this.#buffer.length < want && (await this.#fill()));
    return this.#take(want);
  }

  release(): void {
    this.#reader.releaseLock();
  }
}
