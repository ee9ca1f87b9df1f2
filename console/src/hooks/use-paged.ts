import { useState } from "preact/hooks";
import { useView } from "../router";
import { type Loaded, useLoad } from "./use-load";

/** A page of a list as the API answers it. */
export interface ListPage<Item> {
  data: Item[];
  next_cursor: string | null;
}

/** What one call of a list asks: the page size, and the cursor of the page (none: the first). */
export interface PageQuery {
  limit: number;
  cursor?: string;
}

/** Where a list stands, and the moves from there: what the pager shows, whatever holds the rows. */
export interface Paging {
  /** 1-based numbers of the first and last rows shown (0 and 0 when none). */
  first: number;
  last: number;
  /** Whether rows follow the last one shown. */
  more: boolean;
  /** How many rows in all, when known: a local list's, or an API list's on its last page (the API gives no totals). */
  total: number | null;
  /** The way back: to the page before, to the first page when the trail of earlier cursors is gone (a reload, a
   * shared link), or none on the first page. */
  back: "previous" | "first" | null;
  limit: number;
  /** A page is on its way: moves wait for it, so no move starts from a page no longer shown. */
  busy: boolean;
  next: () => void;
  previous: () => void;
  setLimit: (limit: number) => void;
}

export interface PagedList<Item, Filters> extends Loaded<ListPage<Item>> {
  filters: Filters;
  /** Changes filters, back to the first page. */
  filter: (changes: Partial<Filters>) => void;
  paging: Paging;
}

export const PAGE_SIZES = [25, 50, 100, 200] as const;
const DEFAULT_LIMIT = "50";

/**
 * A cursor-paged list of the API with its filters, both in the address (`useView`): `cursor`, the 1-based `page` (for
 * the row numbers: the API gives no totals) and `limit`, after `prefix` when a page has more than one list. The
 * cursors of the pages before are kept in memory, for "Previous".
 */
export function usePagedList<Item, Filters extends Record<string, string>>(
  defaults: Filters,
  load: (filters: Filters, page: PageQuery) => Promise<ListPage<Item>>,
  settings: { prefix?: string; deps?: unknown[] } = {},
): PagedList<Item, Filters> {
  const prefix = settings.prefix ?? "";
  const names = { cursor: `${prefix}cursor`, page: `${prefix}page`, limit: `${prefix}limit` };
  const [view, change] = useView<Record<string, string>>({
    ...defaults,
    [names.cursor]: "",
    [names.page]: "1",
    [names.limit]: DEFAULT_LIMIT,
  });
  const [trail, setTrail] = useState<string[]>([]);
  const filters = Object.fromEntries(Object.keys(defaults).map((name) => [name, view[name]])) as Filters;
  const cursor = view[names.cursor] ?? "";
  const page = Math.max(1, Number(view[names.page]) || 1);
  const limit = PAGE_SIZES.find((size) => String(size) === view[names.limit]) ?? Number(DEFAULT_LIMIT);
  // The answer keeps the position it was asked for: the rows shown and the moves from them always agree, even while
  // the next page is on its way.
  const loaded = useLoad(
    async () => ({ at: { page, cursor }, answer: await load(filters, { limit, ...(cursor ? { cursor } : {}) }) }),
    [JSON.stringify(filters), cursor, limit, ...(settings.deps ?? [])],
  );
  const list = { ...loaded, data: loaded.data?.answer };
  const at = loaded.data?.at ?? { page, cursor };
  const moveTo = (changes: Record<string, string>, kept: string[]) => {
    setTrail(kept);
    change(changes);
  };
  const firstPage = { [names.cursor]: "", [names.page]: "1" };
  const shown = list.data?.data.length ?? 0;
  const paging: Paging = {
    first: shown ? (at.page - 1) * limit + 1 : 0,
    last: shown ? (at.page - 1) * limit + shown : 0,
    more: Boolean(list.data?.next_cursor),
    total: list.data && !list.data.next_cursor ? (at.page - 1) * limit + shown : null,
    back: at.page <= 1 ? null : trail.length > 0 ? "previous" : "first",
    limit,
    busy: loaded.loading,
    next: () => {
      const next = list.data?.next_cursor;
      if (next && !loaded.loading)
        moveTo({ [names.cursor]: next, [names.page]: String(at.page + 1) }, [...trail, at.cursor]);
    },
    previous: () => {
      if (loaded.loading) return;
      const before = trail.at(-1);
      if (before === undefined || at.page <= 1) moveTo(firstPage, []);
      else moveTo({ [names.cursor]: before, [names.page]: String(at.page - 1) }, trail.slice(0, -1));
    },
    setLimit: (size) => moveTo({ ...firstPage, [names.limit]: String(size) }, []),
  };
  return {
    ...list,
    filters,
    filter: (changes) => moveTo({ ...(changes as Record<string, string>), ...firstPage }, []),
    paging,
  };
}

/** Pages of rows already at hand (a log read whole): the same pager as the API's lists, over a slice. */
export function useLocalPages<Row>(rows: Row[]): { rows: Row[]; paging: Paging } {
  const [start, setStart] = useState(0);
  const [limit, setLimit] = useState(Number(DEFAULT_LIMIT));
  // Fewer rows than before (a narrower filter) must not leave the view past the end.
  const from = start < rows.length ? start : 0;
  const shown = rows.slice(from, from + limit);
  return {
    rows: shown,
    paging: {
      first: shown.length ? from + 1 : 0,
      last: from + shown.length,
      more: from + limit < rows.length,
      total: rows.length,
      back: from > 0 ? "previous" : null,
      limit,
      busy: false,
      next: () => setStart(from + limit),
      previous: () => setStart(Math.max(0, from - limit)),
      setLimit: (size) => {
        setLimit(size);
        setStart(0);
      },
    },
  };
}
