import { useState } from "preact/hooks";
import { ErrorNote } from "../components/error-note";
import { useAction } from "../hooks/use-action";
import { signIn } from "../session";

/**
 * Sign-in with an API key. The key is kept in memory for this tab only: never in storage or a cookie; a reload or
 * sign-out forgets it.
 */
export function SignIn() {
  const [token, setToken] = useState("");
  const { run, busy, error } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      await signIn(token);
      setToken("");
    });
  };
  return (
    <main class="sign-in" id="main">
      <h1>Proxy Account console</h1>
      <p>Sign in with an API key. It stays in this tab's memory only: a reload or signing out forgets it.</p>
      <form onSubmit={submit} class="form">
        <label>
          API key
          <input
            name="api_key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            required
            pattern="(live|test)_[0-9A-Za-z]{64}"
            title="A live_ or test_ key: the prefix and 64 letters and digits"
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
          <small>
            A <code>live_</code> key, or a <code>test_</code> key for the sandbox. A read-only key shows read-only
            pages. When the account has MFA, actions that need it ask for a code from your authenticator.
          </small>
        </label>
        {error ? <ErrorNote error={error} /> : null}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy} aria-busy={busy}>
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </div>
      </form>
      <p class="muted">
        The console uses the public API only: <a href="/v1/docs">API reference</a>.
      </p>
    </main>
  );
}
