import { useState } from "preact/hooks";

export interface Action {
  /** Runs `step`; an error it throws is kept in `error` for the form to show. */
  run: (step: () => Promise<void>) => Promise<void>;
  busy: boolean;
  error: unknown;
}

/** An action the user starts (a submit, a button): whether it is under way, and the error it ended with. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (step: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await step();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error };
}
