import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Area } from "./api";

/** Hash routes (`#/subusers/sub_…`): static files need no server routing, and every page has its own address. */
export interface Route {
  page: string;
  id: string | null;
}

/** What a page module tells the console of itself: its name in the menu, the area of the key scopes it reads. */
export interface PageEntry {
  label: string;
  /** A key that cannot read this area does not see the page. */
  area: Area;
  component: ComponentType<{ route: Route }>;
}

export function parseRoute(hash: string): Route {
  const [page = "", id = null] = hash.replace(/^#\/?/, "").split("/");
  return { page: page || "overview", id: id ? decodeURIComponent(id) : null };
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
