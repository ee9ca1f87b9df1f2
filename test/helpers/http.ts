import { env, exports } from "cloudflare:workers";

export const BASE = "https://api.test";
export const ADMIN_TOKEN = "test-admin-token";

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * One HTTP call to the worker, through its real fetch handler. From a random private client address unless the
 * call names one: calls without a key count against their address's window, and the files of the suite share one
 * runtime, so calls from one shared address would run out of it whenever the suite grows.
 */
export function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === "cf-connecting-ip")) {
    headers["CF-Connecting-IP"] = someAddress();
  }
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body }));
}

/** A random private client address. */
export function someAddress(): string {
  const part = () => Math.floor(Math.random() * 250);
  return `10.${part()}.${part()}.${part()}`;
}

export function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return call(method, `/internal/admin${path}`, { token: ADMIN_TOKEN, body });
}

export async function json<T = Record<string, any>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

export { env };

export const GATEWAY_TOKEN = "test-gateway-token";

/**
 * A call on the gateway contract: with the node's own credential when the body names a node (the node contract
 * refuses the shared token), else with the shared gateway token.
 */
export async function gateway(path: string, body: unknown): Promise<Response> {
  const node = (body as { node?: unknown } | null)?.node;
  if (typeof node !== "string") return call("POST", `/internal/gateway${path}`, { token: GATEWAY_TOKEN, body });
  const response = await call("POST", `/internal/gateway${path}`, { token: await nodeToken(node), body });
  if (response.status !== 401) return response;
  // A credential of an earlier test file's database: issued again in this one's.
  nodeTokens.delete(node);
  return call("POST", `/internal/gateway${path}`, { token: await nodeToken(node), body });
}

const nodeTokens = new Map<string, string>();

/** The credential of a gateway node, issued on first use. */
export async function nodeToken(node: string): Promise<string> {
  const known = nodeTokens.get(node);
  if (known) return known;
  const issued = await admin("POST", "/gateway-nodes", { node });
  if (issued.status !== 201) throw new Error(`node credential: ${issued.status} ${await issued.text()}`);
  const { token } = await json<{ token: string }>(issued);
  nodeTokens.set(node, token);
  return token;
}

/** The raw stub of a key's guard, for tests that look inside it (`runInDurableObject`). */
export function guardStub(keyId: string) {
  return env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(keyId));
}
