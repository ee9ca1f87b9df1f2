import { type Access, accessOf } from "./access";
import { ApiError, createProxyAccountClient, type ProxyAccountClient, type Schemas } from "./api";
import { signal, useSignal } from "./lib/signal";
import { passkeyAssertion } from "./passkeys";

/**
 * Who signed in. A member, with email and password, on a server session: its `__Host-session` cookie is `HttpOnly`
 * (no script here ever holds it), and its CSRF token rides in memory and in `X-CSRF-Token` on every change. Or an API
 * key, pasted for this tab: the key lives in memory only.
 */
export type Signer =
  | { kind: "member"; member: Schemas["Member"]; sessionId: string }
  | {
      kind: "key";
      key: Schemas["ApiKey"];
      /** The key itself, for what the client cannot carry (the live tail's WebSocket). */
      apiKey: string;
    };

/** What the console knows about the signed-in member or key, all of it read from the public API at sign-in. */
export interface Session extends Access {
  client: ProxyAccountClient;
  signer: Signer;
  /** A `test_` key: the account's sandbox twin, simulated money and traffic. */
  sandbox: boolean;
  gateway: Schemas["Gateway"];
  /** Null when the key or role has no `account` access. */
  account: Schemas["Account"] | null;
  security: Schemas["SecurityInfo"] | null;
  /** Sub-user passwords a create or rotation showed in this session, so the proxy-string generator can fill them in. */
  shownPasswords: Map<string, string>;
  /**
   * Sub-user labels by id, as this session's answers named them (lists, searches, a sub-user's page): tables of rows
   * that carry only an id show its label when known. The API has no lookup of many ids at once.
   */
  subuserLabels: Map<string, string>;
}

/**
 * Where the console stands: asking the API whether the browser's session cookie is still good (at load), signed out
 * (with why, when a session ended under it), or signed in. Held in this signal alone: nothing in storage.
 */
export type SignInState =
  | { status: "checking" }
  | { status: "signed-out"; notice: string | null }
  | { status: "signed-in"; session: Session };

const state = signal<SignInState>({ status: "checking" });

/** The console's root shows sign-in, the check at load, or the pages by it. */
export function useSignInState(): SignInState {
  return useSignal(state);
}

/** The signed-in session of the pages (they are shown only while signed in); they render again when it changes. */
export function useSession(): Session {
  const current = useSignal(state);
  if (current.status !== "signed-in") throw new Error("not signed in");
  return current.session;
}

const BASE_URL = `${location.origin}/v1`;

/** A client without a key: the browser's session cookie goes by itself, and `csrfToken` with each change. */
function cookieClient(csrfToken?: string): ProxyAccountClient {
  return createProxyAccountClient({ baseUrl: BASE_URL, csrfToken, retry: { maxAttempts: 2 }, fetch: noticingEnd });
}

/** The client of the pages that need no credential (sign-in, an invitation, a password reset). */
export const publicClient = cookieClient();

/**
 * Every call of a member's client: a 401 means the session ended under the console (an idle hour, 12 hours after
 * sign-in, signed out everywhere from another browser, revoked): back to sign-in, saying so.
 */
async function noticingEnd(request: Request): Promise<Response> {
  const response = await fetch(request);
  if (response.status === 401 && state.value.status === "signed-in" && state.value.session.signer.kind === "member") {
    state.set({
      status: "signed-out",
      notice:
        "Your session has ended: it was idle for an hour, reached its 12 hours, or was signed out from elsewhere. " +
        "Sign in again.",
    });
  }
  return response;
}

/** At load: a session cookie still good signs the member back in; none, or an ended one, shows the sign-in. */
export async function resumeSession(): Promise<void> {
  try {
    const current = await publicClient.get("/auth/session");
    await enter(cookieClient(current.csrf_token), {
      kind: "member",
      member: current.member,
      sessionId: current.session_id,
    });
  } catch (error) {
    if (state.value.status !== "checking") return;
    const signedOut = error instanceof ApiError && error.status === 401;
    state.set({
      status: "signed-out",
      notice: signedOut ? null : "Your sign-in could not be checked (the API did not answer): sign in again.",
    });
  }
}

export async function signInWithPassword(credentials: Schemas["SignInRequest"]): Promise<void> {
  await enterSignedIn(await publicClient.post("/auth/sign-in", { body: credentials }));
}

/**
 * Signs in with a passkey of this site: the API's options, the person picks and unlocks one, and the API answers as
 * a password sign-in does (the session cookie, its CSRF token). No email, password or TOTP code is asked.
 */
export async function signInWithPasskey(): Promise<void> {
  const options = await publicClient.post("/auth/sign-in/passkey/options");
  const credential = await passkeyAssertion(options);
  await enterSignedIn(await publicClient.post("/auth/sign-in/passkey", { body: { credential } }));
}

/** A member's sign-in answered (by password or passkey): its session, its CSRF token, the pages. */
function enterSignedIn(signed: Schemas["SignedIn"]): Promise<void> {
  return enter(cookieClient(signed.csrf_token), {
    kind: "member",
    member: signed.member,
    sessionId: signed.session.id,
  });
}

export async function signInWithKey(token: string): Promise<void> {
  const apiKey = token.trim();
  const client = createProxyAccountClient({ apiKey, baseUrl: BASE_URL, retry: { maxAttempts: 2 } });
  await enter(client, { kind: "key", key: await client.get("/api-keys/current"), apiKey });
}

/** Reads what the pages need of the account, in one round trip, then shows them. */
async function enter(client: ProxyAccountClient, signer: Signer): Promise<void> {
  // A key or role without `account` access answers 403 for the account: it is asked for at once anyway.
  const [gateway, account, security] = await Promise.all([
    client.get("/gateway"),
    client.get("/users/me").catch(unlessOutOfScope),
    client.get("/users/me/security").catch(unlessOutOfScope),
  ]);
  const access =
    signer.kind === "key"
      ? accessOf(signer.key.scopes, signer.key.products, security)
      : // A role's scopes: null is an owner's everything (the generated type misses the null).
        accessOf(signer.member.scopes as Schemas["ApiKeyScopes"] | null, null, security);
  const session: Session = {
    client,
    signer,
    gateway,
    account,
    security,
    sandbox: signer.kind === "key" && signer.key.token_hint.startsWith("test_"),
    shownPasswords: new Map(),
    subuserLabels: new Map(),
    ...access,
    // A member's gated actions ask for the member's own code (the account's factor is not theirs to use).
    ...(signer.kind === "member" ? { needsMfa: signer.member.mfa_enabled } : {}),
  };
  state.set({ status: "signed-in", session });
}

/** A session that has ended already needs no sign-out. */
function unlessEnded(error: unknown): void {
  if (!(error instanceof ApiError && error.status === 401)) throw error;
}

function unlessOutOfScope(error: unknown): null {
  if (error instanceof ApiError && error.code === "insufficient_scope") return null;
  throw error;
}

/** Signs out: a member's session ends on the server (`everywhere`: every session of theirs); a key is forgotten. */
export async function signOut(session: Session, options: { everywhere?: boolean } = {}): Promise<void> {
  if (session.signer.kind === "member") {
    await session.client.post(options.everywhere ? "/auth/sign-out-everywhere" : "/auth/sign-out").catch(unlessEnded);
  }
  state.set({
    status: "signed-out",
    notice: options.everywhere ? "Signed out everywhere: every session of yours has ended." : null,
  });
}

/** Reads the account again (its balance after a purchase); the pages showing it render again. */
export async function refreshAccount(session: Session): Promise<void> {
  // A key without `account` access read none at sign-in, and has none to read again.
  if (!session.account) return;
  const account = await session.client.get("/users/me");
  // A sign-out (or another sign-in) while the read was under way keeps what it set.
  const current = state.value;
  if (current.status === "signed-in" && current.session === session) {
    state.set({ status: "signed-in", session: { ...session, account } });
  }
}

/** The member turned their own MFA on or off (the Security page): gated actions ask for a code from now on, or not. */
export function setOwnMfa(session: Session, enabled: boolean): void {
  const current = state.value;
  if (current.status !== "signed-in" || current.session !== session || session.signer.kind !== "member") return;
  const signer = { ...session.signer, member: { ...session.signer.member, mfa_enabled: enabled } };
  state.set({ status: "signed-in", session: { ...session, signer, needsMfa: enabled } });
}

/** Whether gated actions ask for a second factor: never on the pages shown signed out (an invitation, a reset). */
export function useNeedsMfa(): boolean {
  const current = useSignal(state);
  return current.status === "signed-in" && current.session.needsMfa;
}
