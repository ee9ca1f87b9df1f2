import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Area } from "./api";

/**
 * Hash routes (`#/subusers/sub_…`): static files need no server routing, and every page has its own address. A list's
 * filters and page position ride in the query (`#/subusers?status=active&cursor=…`), so a reload or a shared link
 * shows the same view.
 */
export interface Route {
  page: string;
  id: string | null;
  /** The query as it was when the page was reached (the page keeps its own changes, `useView`). */
  query: string;
}

/** What a page module tells the console of itself: its name in the menu, the area of the key scopes it reads. */
export interface PageEntry {
  label: string;
  /**
   * A key or member that cannot read this area does not see the page; `own` is a member's own page (its sessions),
   * for every member and no key.
   */
  area: Area | "own";
  /** Of the live account only: a sandbox key does not see it (the API answers 403 `live_key_required`). */
  liveOnly?: boolean;
  component: ComponentType<{ route: Route }>;
}

export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#\/?/, "").split("?");
  const [page = "", id = null] = path.split("/");
  return { page: page || "overview", id: id ? decodeURIComponent(id) : null, query };
}

export function href(page: string, id?: string): string {
  return id ? `#/${page}/${encodeURIComponent(id)}` : `#/${page}`;
}

export function navigate(page: string, id?: string): void {
  location.hash = href(page, id);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

/**
 * A page's view (filters, page position) kept in the address's query, each value under its own name; a value equal
 * to its default is left out. Changes replace the address (`replaceState`): no history entry per keystroke, and no
 * `hashchange`, so the page is not rebuilt. Several views of one page each write only their own names.
 */
export function useView<View extends Record<string, string>>(defaults: View): [View, (changes: Partial<View>) => void] {
  const [view, setView] = useState<View>(() => {
    const query = currentQuery();
    const read = Object.entries(defaults).map(([name, fallback]) => [name, query.get(name) ?? fallback]);
    return Object.fromEntries(read) as View;
  });
  const change = (changes: Partial<View>) => {
    const next = { ...view, ...changes };
    const query = currentQuery();
    for (const [name, value] of Object.entries(next)) {
      if (value === defaults[name]) query.delete(name);
      else query.set(name, value);
    }
    const path = location.hash.split("?")[0] || "#/";
    const search = query.toString();
    history.replaceState(history.state, "", search ? `${path}?${search}` : path);
    setView(next);
  };
  return [view, change];
}

function currentQuery(): URLSearchParams {
  return new URLSearchParams(location.hash.split("?")[1] ?? "");
}
