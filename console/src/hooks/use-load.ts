import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; a newer load wins over an older one still under way. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  // The caller names what the load depends on (`deps`); `load` itself is a new closure on every render.
  useEffect(() => {
    const run = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, loading: false }),
      (error) => run === latest.current && setState({ error, loading: false }),
    );
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
