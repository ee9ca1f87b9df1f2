import { env, exports } from "cloudflare:workers";

export const BASE = "https://api.test";
export const ADMIN_TOKEN = "test-admin-token";

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP call to the worker, through its real fetch handler. */
export function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body }));
}

export function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return call(method, `/internal/admin${path}`, { token: ADMIN_TOKEN, body });
}

export async function json<T = Record<string, any>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

export { env };

export const GATEWAY_TOKEN = "test-gateway-token";

export function gateway(path: string, body: unknown): Promise<Response> {
  return call("POST", `/internal/gateway${path}`, { token: GATEWAY_TOKEN, body });
}

/** The raw stub of a key's guard, for tests that look inside it (`runInDurableObject`). */
export function guardStub(keyId: string) {
  return env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(keyId));
}
