import { z } from "@hono/zod-openapi";
import { desc, lt, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import { base64UrlDecode, base64UrlEncode } from "./crypto";
import { ApiError } from "./errors";
import { queryInteger, token } from "./fields";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** What every list verb takes: an opaque cursor and a page size. */
export interface PageQuery {
  cursor?: string;
  limit: number;
}

/** Query parameters shared by every list endpoint. */
const cursorSchema = token(/^[A-Za-z0-9_-]+$/, 256, "not a cursor returned by this API");

export const paginationQuery = z.object({
  cursor: cursorSchema.optional().openapi({ description: "Opaque cursor from a previous page's `next_cursor`." }),
  limit: queryInteger(1, MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .openapi({
      description: `Page size, 1-${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}.`,
      example: DEFAULT_PAGE_SIZE,
    }),
});

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item).max(MAX_PAGE_SIZE),
    next_cursor: cursorSchema.nullable().openapi({ description: "Cursor of the next page; null on the last page." }),
  });
}

/**
 * Lists are ordered newest first by id (ULIDs sort by creation time), and the cursor
 * holds the last id seen: a keyset, so rows inserted meanwhile never shift a page.
 */
export function cursorAfter(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  try {
    const decoded = JSON.parse(base64UrlDecode(cursor)) as { after?: unknown };
    if (typeof decoded.after === "string" && decoded.after.length > 0) return decoded.after;
  } catch {
    // fall through
  }
  throw new ApiError("invalid_request", "cursor: not a cursor returned by this API.", {
    details: [{ field: "cursor", message: "Not a cursor returned by this API." }],
  });
}

/** The keyset clauses of a page: rows after the cursor, newest first, one extra row to see if more follow. */
export function keysetPage(idColumn: SQLiteColumn, query: PageQuery) {
  const after = cursorAfter(query.cursor);
  return {
    where: (after ? lt(idColumn, after) : undefined) as SQL | undefined,
    orderBy: desc(idColumn),
    limit: query.limit + 1,
  };
}

/**
 * Turns `limit + 1` fetched rows into a page, and sets the `Link` header to the next page.
 */
export function toPage<Row extends { id: string }, Item>(
  c: Context,
  rows: Row[],
  limit: number,
  present: (row: Row) => Item,
): { data: Item[]; next_cursor: string | null } {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  const nextCursor = hasMore && last ? base64UrlEncode(JSON.stringify({ after: last.id })) : null;
  if (nextCursor) {
    const next = new URL(c.req.url);
    next.searchParams.set("cursor", nextCursor);
    next.searchParams.set("limit", String(limit));
    c.header("Link", `<${next.toString()}>; rel="next"`);
  }
  return { data: pageRows.map(present), next_cursor: nextCursor };
}
