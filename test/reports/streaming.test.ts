import { env } from "cloudflare:workers";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import {
  type ByteSink,
  type Column,
  encodeRows,
  PARQUET_ROW_GROUP_SIZE,
  type Row,
  tsvField,
} from "../../src/domain/reports/formats";
import { MultipartSink, PART_SIZE } from "../../src/domain/reports/sink";
import { csvField } from "../../src/platform/csv";

const columns: Column[] = [
  { name: "day", type: "date" },
  { name: "product", type: "string" },
  { name: "subuser_id", type: "string" },
  { name: "bytes_in", type: "integer" },
  { name: "error_rate", type: "number" },
  { name: "seen", type: "timestamp", nullable: true },
];

const DAY = 86_400_000;
const PAGE = 5_000;

/** `total` synthetic traffic rows in pages of 5,000, made on demand (never all in memory). */
async function* syntheticPages(total: number): AsyncIterable<Row[]> {
  for (let start = 0; start < total; start += PAGE) {
    const page: Row[] = [];
    for (let i = start; i < Math.min(total, start + PAGE); i++) {
      page.push({
        day: Date.UTC(2026, 10, 1) + (i % 90) * DAY,
        product: "residential",
        subuser_id: `sub_${String(i).padStart(26, "0")}`,
        bytes_in: i * 1000,
        error_rate: (i % 100) / 100,
        seen: i % 7 === 0 ? null : Date.UTC(2026, 10, 1) + i,
      });
    }
    yield page;
  }
}

/** Wraps a sink to record the largest chunk handed to it (what an encoder held at once). */
function measured(sink: ByteSink) {
  const stats = { largestChunk: 0, chunks: 0 };
  return {
    stats,
    sink: {
      write(chunk: Uint8Array) {
        stats.largestChunk = Math.max(stats.largestChunk, chunk.length);
        stats.chunks++;
        return sink.write(chunk);
      },
    },
  };
}

async function encodeToR2(format: "csv" | "parquet", rows: number) {
  const key = `test/streaming/${format}-${rows}-${crypto.randomUUID()}`;
  const r2 = new MultipartSink(env.REPORTS, key, "application/octet-stream");
  const { sink, stats } = measured(r2);
  const started = performance.now();
  const count = await encodeRows(format, columns, syntheticPages(rows), sink);
  const bytes = await r2.close();
  const object = await env.REPORTS.head(key);
  return {
    key,
    count,
    bytes,
    stored: object?.size,
    parts: r2.parts,
    peak: r2.peakBuffered,
    ...stats,
    ms: performance.now() - started,
  };
}

describe("bounded memory: files are streamed to R2 in fixed-size multipart parts", () => {
  it("CSV: 1 M rows hold no more than 100 k rows do — one 5 MiB part in the sink, one page in the encoder", async () => {
    const small = await encodeToR2("csv", 100_000);
    const large = await encodeToR2("csv", 1_000_000);
    expect(large.count).toBe(1_000_000);
    expect(large.stored).toBe(large.bytes);
    expect(large.parts).toBe(Math.ceil(large.bytes / PART_SIZE));
    expect(large.peak).toBe(PART_SIZE);
    expect(small.peak).toBe(PART_SIZE);
    // The largest chunk the encoder produced is one page of rows, whatever the file's length.
    expect(large.largestChunk).toBeLessThan(1024 * 1024);
    expect(large.largestChunk).toBeLessThanOrEqual(small.largestChunk * 1.05);
  }, 180_000);

  it("parquet: 1 M rows in row groups of 10,000; the writer flushes one group at a time; read back with hyparquet", async () => {
    const small = await encodeToR2("parquet", 100_000);
    const large = await encodeToR2("parquet", 1_000_000);
    expect(large.count).toBe(1_000_000);
    expect(large.peak).toBeLessThanOrEqual(PART_SIZE);
    expect(large.largestChunk).toBeLessThanOrEqual(small.largestChunk * 1.5);
    expect(large.chunks).toBeGreaterThanOrEqual(1_000_000 / PARQUET_ROW_GROUP_SIZE);
    const file = await (await env.REPORTS.get(large.key))?.arrayBuffer();
    if (!file) throw new Error("parquet file missing");
    const metadata = parquetMetadata(file);
    expect(Number(metadata.num_rows)).toBe(1_000_000);
    expect(metadata.row_groups).toHaveLength(1_000_000 / PARQUET_ROW_GROUP_SIZE);
    const last = await parquetReadObjects({ file, rowStart: 999_999, rowEnd: 1_000_000 });
    expect(last[0]).toMatchObject({
      subuser_id: `sub_${String(999_999).padStart(26, "0")}`,
      bytes_in: 999_999_000n,
      error_rate: 0.99,
    });
  }, 180_000);

  it("a file smaller than a part is one plain object; an empty report is a header-only file", async () => {
    const tiny = await encodeToR2("csv", 3);
    expect(tiny.parts).toBe(0);
    expect(tiny.stored).toBe(tiny.bytes);
    const empty = await encodeToR2("csv", 0);
    const text = await (await env.REPORTS.get(empty.key))?.text();
    expect(text).toBe("day,product,subuser_id,bytes_in,error_rate,seen\r\n");
  });

  it("cuts parts at exactly the part size whatever the chunk sizes written", async () => {
    const key = `test/streaming/parts-${crypto.randomUUID()}`;
    const sink = new MultipartSink(env.REPORTS, key, "text/plain");
    const chunk = new Uint8Array(3_000_001).fill(120);
    for (let i = 0; i < 5; i++) await sink.write(chunk);
    expect(await sink.close()).toBe(15_000_005);
    expect(sink.parts).toBe(3);
    expect((await env.REPORTS.head(key))?.size).toBe(15_000_005);
  });
});

describe("text encodings", () => {
  it.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["line\nbreak", '"line\nbreak"'],
    ["cr\rhere", '"cr\rhere"'],
    ["", ""],
  ])("CSV quotes %j as %j (RFC 4180)", (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it("TSV turns tabs and line breaks inside a value into spaces (TSV has no quoting)", () => {
    expect(tsvField("a\tb\nc\r\nd")).toBe("a b c  d");
  });

  it("NDJSON writes one object per line with timestamps as RFC 3339 and nulls kept", async () => {
    const chunks: Uint8Array[] = [];
    const count = await encodeRows("json", columns, syntheticPages(2), {
      async write(chunk) {
        chunks.push(chunk);
      },
    });
    const lines = new TextDecoder()
      .decode(chunks[0])
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(count).toBe(2);
    expect(lines[0]).toEqual({
      day: "2026-11-01",
      product: "residential",
      subuser_id: `sub_${"0".repeat(26)}`,
      bytes_in: 0,
      error_rate: 0,
      seen: null,
    });
    expect(lines[1].seen).toBe("2026-11-01T00:00:00.001Z");
  });
});
