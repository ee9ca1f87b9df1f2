import type { Product } from "../../../db/schema";
import type { DomainContext } from "../../context";
import type { Column, Row } from "../formats";

/** What a run reads: the account, the period `[from, to)` and the definition's filters (null = no filter). */
export interface RunScope {
  accountId: string;
  from: number;
  to: number;
  products: Product[] | null;
  subuserIds: string[] | null;
  /** `traffic`: rows per sub-user (absent) or per target domain. */
  groupBy?: "subuser" | "domain";
}

/** A report type: its columns, and its rows as pages (each read from its store in one query or RPC). */
export interface ReportKind {
  columns: Column[];
  pages(ctx: DomainContext, scope: RunScope): AsyncIterable<Row[]>;
}

/** Rows per page read from D1 or the traffic store. */
export const PAGE_SIZE = 5_000;

/** Reads pages until one comes back short: `read(last)` gets the last row of the previous page (keyset). */
export async function* keysetPages<T>(read: (last: T | null) => Promise<T[]>, present: (row: T) => Row) {
  let last: T | null = null;
  for (;;) {
    const page = await read(last);
    if (page.length > 0) yield page.map(present);
    if (page.length < PAGE_SIZE) return;
    last = page[page.length - 1] as T;
  }
}
