import { type Access, accessOf } from "./access";
import { ApiError, createProxyAccountClient, type ProxyAccountClient, type Schemas } from "./api";
import { signal, useSignal } from "./lib/signal";

/** What the console knows about the signed-in key, all of it read from the public API at sign-in. */
export interface Session extends Access {
  client: ProxyAccountClient;
  /** The key itself, for what the client cannot carry (the live tail's WebSocket). */
  apiKey: string;
  key: Schemas["ApiKey"];
  /** A `test_` key: the account's sandbox twin, simulated money and traffic. */
  sandbox: boolean;
  gateway: Schemas["Gateway"];
  /** Null when the key has no `account` access. */
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

// The key lives in this signal alone: never in storage or a cookie, gone on sign-out, reload or when the tab closes.
const current = signal<Session | null>(null);

/** The session, or null before sign-in: the console's root shows sign-in or the pages by it. */
export function useSignedIn(): Session | null {
  return useSignal(current);
}

/** The signed-in session of the pages (they are shown only while signed in); they render again when it changes. */
export function useSession(): Session {
  const session = useSignal(current);
  if (!session) throw new Error("not signed in");
  return session;
}

export async function signIn(token: string): Promise<void> {
  const client = createProxyAccountClient({
    apiKey: token.trim(),
    baseUrl: `${location.origin}/v1`,
    retry: { maxAttempts: 2 },
  });
  // One round trip: the account is asked for at once, and a key without `account` access answers 403 for it.
  const [key, gateway, account, security] = await Promise.all([
    client.get("/api-keys/current"),
    client.get("/gateway"),
    client.get("/users/me").catch(unlessOutOfScope),
    client.get("/users/me/security").catch(unlessOutOfScope),
  ]);
  current.set({
    client,
    apiKey: token.trim(),
    key,
    gateway,
    account,
    security,
    sandbox: key.token_hint.startsWith("test_"),
    shownPasswords: new Map(),
    subuserLabels: new Map(),
    ...accessOf(key, security),
  });
}

function unlessOutOfScope(error: unknown): null {
  if (error instanceof ApiError && error.code === "insufficient_scope") return null;
  throw error;
}

export function signOut(): void {
  current.set(null);
}

/** Reads the account again (its balance after a purchase); the pages showing it render again. */
export async function refreshAccount(session: Session): Promise<void> {
  // A key without `account` access read none at sign-in, and has none to read again.
  if (!session.account) return;
  const account = await session.client.get("/users/me");
  // A sign-out (or another key) while the read was under way keeps what it set.
  if (current.value === session) current.set({ ...session, account });
}
