import { useState } from "preact/hooks";
import { ApiError } from "../api";
import { ErrorNote } from "../components/error-note";
import * as field from "../components/fields";
import { Form } from "../components/form";
import { useAction } from "../hooks/use-action";
import { passkeysSupported } from "../passkeys";
import { publicClient, signInWithKey, signInWithPasskey, signInWithPassword } from "../session";

type Method = "password" | "key" | "forgot";

/**
 * Sign-in: a member with email and password (and a code when they enrolled MFA), or with a passkey, on a session that
 * a reload keeps; or a program's API key, kept in this tab's memory only. "Forgot your password?" mails a reset link.
 */
export function SignIn(props: { notice: string | null }) {
  const [method, setMethod] = useState<Method>("password");
  return (
    <main class="sign-in" id="main">
      <h1>Proxy Account console</h1>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      {method === "password" ? (
        <>
          <PasswordSignIn />
          <PasskeySignIn />
        </>
      ) : method === "key" ? (
        <KeySignIn />
      ) : (
        <ForgotPassword />
      )}
      <div class="sign-in-methods">
        {method !== "password" ? (
          <button type="button" class="link" onClick={() => setMethod("password")}>
            Sign in with email and password
          </button>
        ) : (
          <button type="button" class="link" onClick={() => setMethod("forgot")}>
            Forgot your password?
          </button>
        )}
        {method !== "key" ? (
          <button type="button" class="link" onClick={() => setMethod("key")}>
            Sign in with an API key
          </button>
        ) : null}
      </div>
      <p class="muted">
        The console uses the public API only: <a href="/v1/docs">API reference</a>.
      </p>
    </main>
  );
}

function PasswordSignIn() {
  // Asked for once the API says this member enrolled MFA.
  const [askCode, setAskCode] = useState(false);
  const [code, setCode] = useState("");
  return (
    <>
      <p>Sign in with your email and password. You stay signed in when you reload, until you sign out.</p>
      <Form
        fields={{
          email: field.text("Email", { type: "email", required: true, autoComplete: "username" }),
          password: field.secret("Password", { required: true, autoComplete: "current-password" }),
        }}
        submitLabel="Sign in"
        submit={async (credentials) => {
          try {
            await signInWithPassword({ ...credentials, ...(askCode ? { mfa_code: code.trim() } : {}) });
          } catch (error) {
            if (error instanceof ApiError && error.code === "mfa_required") setAskCode(true);
            throw error;
          }
        }}
        onDone={() => undefined}
      >
        {askCode ? (
          <label>
            Authentication code
            <input
              name="mfa_code"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onInput={(event) => setCode(event.currentTarget.value)}
            />
            <small>A current code from your authenticator app, or a recovery code.</small>
          </label>
        ) : null}
      </Form>
    </>
  );
}

/**
 * A member's passkey in place of email, password and code: the browser offers this site's passkeys. A passkey the
 * API no longer knows (removed) is said so, rather than as a bare `invalid_credentials`.
 */
function PasskeySignIn() {
  const action = useAction();
  if (!passkeysSupported()) {
    return <p class="muted">Passkeys are not supported by this browser: sign in with your email and password.</p>;
  }
  const refused = action.error instanceof ApiError && action.error.code === "invalid_credentials";
  return (
    <div class="passkey-sign-in">
      <p class="or">or</p>
      <button
        type="button"
        disabled={action.busy}
        aria-busy={action.busy}
        onClick={() => void action.run(signInWithPasskey)}
      >
        {action.busy ? "Waiting for your passkey…" : "Sign in with a passkey"}
      </button>
      {refused ? (
        <div class="error" role="alert">
          <strong>That passkey did not sign you in: it is not one of your account's passkeys.</strong>
          <small>
            It may have been removed from your account. Sign in with your email and password, then add a passkey again
            on your Security page.
          </small>
        </div>
      ) : action.error ? (
        <ErrorNote error={action.error} />
      ) : null}
    </div>
  );
}

function KeySignIn() {
  return (
    <>
      <p>Sign in with an API key. It stays in this tab's memory only: a reload or signing out forgets it.</p>
      <Form
        fields={{
          api_key: field.secret("API key", {
            required: true,
            pattern: "(live|test)_[0-9A-Za-z]{64}",
            title: "A live_ or test_ key: the prefix and 64 letters and digits",
            hint:
              "A live_ key, or a test_ key for the sandbox. A read-only key shows read-only pages. When the account " +
              "has MFA, actions that need it ask for a code from your authenticator.",
          }),
        }}
        submitLabel="Sign in"
        submit={({ api_key }) => signInWithKey(api_key)}
        onDone={() => undefined}
      />
    </>
  );
}

function ForgotPassword() {
  const [sent, setSent] = useState(false);
  if (sent) {
    return (
      <p class="success" role="status">
        If the address belongs to a member, a link to choose a new password is on its way. It works once, for an hour.
      </p>
    );
  }
  return (
    <>
      <p>We mail you a link to choose a new password.</p>
      <Form
        fields={{ email: field.text("Email", { type: "email", required: true, autoComplete: "username" }) }}
        submitLabel="Mail me a link"
        submit={(body) => publicClient.post("/auth/password-reset", { body })}
        onDone={() => setSent(true)}
      />
    </>
  );
}
