import {
  ApiError,
  type components,
  createProxyAccountClient,
  type ProxyAccountClient,
} from "../../clients/typescript/src/index";

export type Schemas = components["schemas"];
export type Area = keyof Schemas["ApiKeyScopes"];
export type Product = "residential" | "mobile" | "isp";
export { ApiError };

/** What the console knows about the signed-in key, all of it read from the public API at sign-in. */
export interface Session {
  client: ProxyAccountClient;
  key: Schemas["ApiKey"];
  /** A `test_` key: the account's sandbox twin, simulated money and traffic. */
  sandbox: boolean;
  gateway: Schemas["Gateway"];
  /** Null when the key has no `account` access. */
  account: Schemas["Account"] | null;
  security: Schemas["SecurityInfo"] | null;
}

// The key lives in this module alone: never in storage or a cookie, gone on sign-out, reload or when the tab closes.
let current: Session | null = null;

export function session(): Session {
  if (!current) throw new Error("not signed in");
  return current;
}

export function signedIn(): boolean {
  return current !== null;
}

/** The client of the signed-in key: the project's typed client, on this origin's `/v1`. */
export function api(): ProxyAccountClient {
  return session().client;
}

export async function signIn(token: string): Promise<Session> {
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
  current = { client, key, gateway, account, security, sandbox: key.token_hint.startsWith("test_") };
  return current;
}

/** Sub-user passwords a create or rotation showed in this tab, so the proxy-string generator can fill them in. */
export const shownPasswords = new Map<string, string>();

function unlessOutOfScope(error: unknown): null {
  if (error instanceof ApiError && error.code === "insufficient_scope") return null;
  throw error;
}

export function signOut(): void {
  current = null;
  shownPasswords.clear();
}

function allows(scopes: Schemas["ApiKeyScopes"], area: Area, access: "read" | "write"): boolean {
  const granted = scopes[area];
  return granted === "write" || (granted === "read" && access === "read");
}

/** Whether the signed-in key may read (or write) an area: the console shows only what would not answer 403. */
export function can(area: Area, access: "read" | "write" = "read"): boolean {
  return current !== null && allows(current.key.scopes, area, access);
}

/** The products this key may act on, among `among`. */
export function productsOf<P extends Product>(among: readonly P[]): P[] {
  const scope = current?.key.products ?? null;
  return among.filter((product) => scope === null || scope.includes(product));
}

/** Gated actions need a second factor when the account has MFA (the API consumes each code once). */
export function needsMfa(): boolean {
  return current?.security?.mfa_enabled ?? false;
}

export async function refreshAccount(): Promise<void> {
  if (current && can("account")) current.account = await current.client.get("/users/me");
}

/** The items of every page of a list, up to `max` (the console's tables stay one screen). */
export async function collect<T>(pages: AsyncIterable<T>, max = 500): Promise<T[]> {
  const items: T[] = [];
  for await (const item of pages) {
    items.push(item);
    if (items.length >= max) break;
  }
  return items;
}
