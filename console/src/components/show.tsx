import type { ComponentChildren } from "preact";
import type { Loaded } from "../hooks/use-load";
import { ErrorNote } from "./error-note";

/** Loading, error and empty states around what a load answered. */
export function Show<T>(props: {
  state: Loaded<T>;
  empty?: (data: T) => boolean;
  emptyText?: string;
  children: (data: T) => ComponentChildren;
}) {
  const { data, error, loading } = props.state;
  if (error) return <ErrorNote error={error} />;
  if (data === undefined)
    return loading ? (
      <p class="muted" role="status">
        Loading…
      </p>
    ) : null;
  if (props.empty?.(data)) return <p class="empty">{props.emptyText ?? "Nothing here yet."}</p>;
  return <div aria-busy={loading}>{props.children(data)}</div>;
}
