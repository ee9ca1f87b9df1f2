import type { RecordFields } from "./usage-record";

export type Sums = { bytes_in: number; bytes_out: number; requests: number; errors: number };

/** The reference: what every row must hold, summed per key from the records a test sent (undefined: left out). */
export function sumBy(records: RecordFields[], key: (record: RecordFields) => unknown): Map<unknown, Sums> {
  const sums = new Map<unknown, Sums>();
  for (const record of records) {
    const k = key(record);
    if (k === undefined) continue;
    const s = sums.get(k) ?? { bytes_in: 0, bytes_out: 0, requests: 0, errors: 0 };
    s.bytes_in += record.bytes_in as number;
    s.bytes_out += record.bytes_out as number;
    s.requests += 1;
    if (record.error_code !== null) s.errors += 1;
    sums.set(k, s);
  }
  return sums;
}

/** An answer's rows by their key `field`, with their sums. */
export function rowsAsMap(rows: Array<Record<string, any>>, field: string): Map<unknown, Sums> {
  return new Map(
    rows.map((row) => [
      row[field],
      { bytes_in: row.bytes_in, bytes_out: row.bytes_out, requests: row.requests, errors: row.errors },
    ]),
  );
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const iso = (ms: number) => new Date(ms).toISOString();
/** A traffic query's range. */
export const range = (from: number, to: number) => `from=${iso(from)}&to=${iso(to)}`;
