import type { SchemaElement } from "hyparquet";
import { ByteWriter, parquetWriteRows } from "hyparquet-writer";
import type { ReportFormat } from "../../db/schema";
import { toIso } from "../../platform/clock";
import { csvLine } from "../../platform/csv";

/**
 * The four file formats, each a streaming encoder: rows arrive a page at a time and leave as bytes to a sink, so a
 * report of any length needs the memory of one page (text) or one row group (parquet), never the whole file.
 *
 * Cells: `string`, `integer` and `number` as they are; `timestamp` is epoch ms (RFC 3339 in text, a UTC
 * TIMESTAMP_MILLIS in parquet); `date` is epoch ms of a UTC midnight (`YYYY-MM-DD` in text, DATE in parquet).
 */
export type ColumnType = "string" | "integer" | "number" | "timestamp" | "date";
export interface Column {
  name: string;
  type: ColumnType;
  nullable?: boolean;
}
export type Cell = string | number | null;
export type Row = Record<string, Cell>;

export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
}

export const contentTypes: Record<ReportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  tsv: "text/tab-separated-values; charset=utf-8",
  json: "application/x-ndjson; charset=utf-8",
  parquet: "application/vnd.apache.parquet",
};

/**
 * Rows per parquet row group: memory stays bounded by one group (its row objects, their BigInt and Date values and
 * its encoded columns: a few MB for these reports), and readers skip by group.
 */
export const PARQUET_ROW_GROUP_SIZE = 5_000;

const encoder = new TextEncoder();

/** Encodes `pages` into `sink` in `format`; returns the number of rows. */
export async function encodeRows(
  format: ReportFormat,
  columns: Column[],
  pages: AsyncIterable<Row[]>,
  sink: ByteSink,
): Promise<number> {
  if (format === "parquet") return encodeParquet(columns, pages, sink);
  const line = lineEncoders[format];
  let count = 0;
  if (format !== "json") await sink.write(encoder.encode(line.header(columns)));
  for await (const page of pages) {
    for (let start = 0; start < page.length; start += ROWS_PER_WRITE) {
      const rows = page.slice(start, start + ROWS_PER_WRITE);
      await sink.write(encoder.encode(rows.map((row) => line.row(columns, row)).join("")));
    }
    count += page.length;
  }
  return count;
}

/**
 * Text rows are encoded a few hundred at a time: a whole page's text (~350 KB) would be a large object in V8, which
 * only a full collection frees, so a million-row file left ~70 MB of them on the heap between collections.
 */
const ROWS_PER_WRITE = 200;

function textOf(column: Column, value: Cell): string {
  if (value === null || value === undefined) return "";
  if (column.type === "timestamp") return toIso(value as number);
  if (column.type === "date") return toIso(value as number).slice(0, 10);
  return String(value);
}

/** TSV has no quoting: tabs and line breaks inside a value become spaces. */
export function tsvField(text: string): string {
  return text.replace(/[\t\r\n]/g, " ");
}

function jsonValue(column: Column, value: Cell): Cell {
  if (value === null || value === undefined) return null;
  return column.type === "timestamp" || column.type === "date" ? textOf(column, value) : value;
}

const lineEncoders: Record<
  Exclude<ReportFormat, "parquet">,
  { header(columns: Column[]): string; row(columns: Column[], row: Row): string }
> = {
  csv: {
    header: (columns) => csvLine(columns.map((c) => c.name)),
    row: (columns, row) => csvLine(columns.map((c) => textOf(c, row[c.name] ?? null))),
  },
  tsv: {
    header: (columns) => `${columns.map((c) => tsvField(c.name)).join("\t")}\n`,
    row: (columns, row) => `${columns.map((c) => tsvField(textOf(c, row[c.name] ?? null))).join("\t")}\n`,
  },
  json: {
    header: () => "",
    row: (columns, row) =>
      `${JSON.stringify(Object.fromEntries(columns.map((c) => [c.name, jsonValue(c, row[c.name] ?? null)])))}\n`,
  },
};

// ── Parquet ─────────────────────────────────────────────────────────────────────────────────────────

const PARQUET_TYPES: Record<ColumnType, Omit<SchemaElement, "name" | "repetition_type">> = {
  string: { type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } },
  integer: { type: "INT64" },
  number: { type: "DOUBLE" },
  timestamp: {
    type: "INT64",
    converted_type: "TIMESTAMP_MILLIS",
    logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
  },
  date: { type: "INT32", converted_type: "DATE", logical_type: { type: "DATE" } },
};

export function parquetSchema(columns: Column[]): SchemaElement[] {
  return [
    { name: "root", num_children: columns.length },
    ...columns.map((column) => ({
      name: column.name,
      ...PARQUET_TYPES[column.type],
      repetition_type: column.nullable ? ("OPTIONAL" as const) : ("REQUIRED" as const),
    })),
  ];
}

function parquetValue(type: ColumnType, value: Cell): unknown {
  if (value === null || value === undefined) return null;
  if (type === "integer") return BigInt(value);
  if (type === "timestamp" || type === "date") return new Date(value as number);
  return value;
}

/** A parquet `Writer` that hands its bytes to the sink after every row group (and at the end), then reuses its buffer. */
class SinkWriter extends ByteWriter {
  readonly #sink: ByteSink;

  constructor(sink: ByteSink) {
    super(64 * 1024);
    this.#sink = sink;
  }

  async flush(): Promise<void> {
    if (this.index === 0) return;
    await this.#sink.write(this.getBytes().slice());
    this.index = 0;
  }

  override async finish(): Promise<void> {
    await this.flush();
  }
}

async function encodeParquet(columns: Column[], pages: AsyncIterable<Row[]>, sink: ByteSink): Promise<number> {
  let count = 0;
  async function* rows() {
    for await (const page of pages) {
      for (const row of page) {
        count++;
        const values: Record<string, unknown> = {};
        for (const column of columns) values[column.name] = parquetValue(column.type, row[column.name] ?? null);
        yield values;
      }
    }
  }
  await parquetWriteRows({
    writer: new SinkWriter(sink),
    columns: columns.map((c) => ({ name: c.name })),
    schema: parquetSchema(columns),
    rows: rows(),
    rowGroupSize: PARQUET_ROW_GROUP_SIZE,
  });
  return count;
}
