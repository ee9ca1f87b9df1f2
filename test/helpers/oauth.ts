import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { BASE, json, someAddress } from "./http";

/**
 * One call to the worker that does not follow redirects (the flow's answers are redirects to the client), from a
 * client address of its own unless given (calls without a credential count against their address's window).
 */
export function call(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { "CF-Connecting-IP": someAddress(), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body, redirect: "manual" }));
}

import type { TestMember } from "./members";

export const REDIRECT_URI = "http://127.0.0.1:9/callback";

/** Base64url of bytes, for PKCE. */
function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge: base64Url(digest) };
}

/** Dynamic client registration (RFC 7591) of a public client. */
export async function registerClient(name = "Test assistant", redirectUris = [REDIRECT_URI]): Promise<string> {
  const response = await call("POST", "/oauth/register", {
    body: { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: "none" },
  });
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.client_id;
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const url = new URL(`${BASE}/oauth/authorize`);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/**
 * A newly registered client's authorization request with an S256 challenge (to our redirect URI unless `extra` says
 * otherwise); its PKCE verifier is kept for the exchange.
 */
export async function newAuthorization(extra: Record<string, string> = {}, name?: string) {
  const clientId = await registerClient(name);
  const { verifier, challenge } = await pkce();
  const path = authorizeUrl({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...extra,
  });
  return { clientId, verifier, challenge, path };
}

/** The cookies a response sets, as one `Cookie` header value (name=value pairs). */
export function cookiesOf(response: Response): string[] {
  return response.headers.getSetCookie().map((cookie) => cookie.split(";")[0] as string);
}

export interface ConsentForm {
  handle: string;
  csrf: string;
  offered: string[];
  checked: string[];
  cookies: string[];
  html: string;
}

/** GETs the consent page as `member` and reads its form. */
export async function openConsent(member: TestMember, path: string): Promise<ConsentForm> {
  const response = await call("GET", path, { headers: { Cookie: `__Host-session=${member.cookie}` } });
  const html = await response.text();
  expect(response.status, html).toBe(200);
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  const boxes = [...html.matchAll(/<input type="checkbox" id="[^"]*" name="scope" value="([^"]*)"( checked)?>/g)];
  return {
    handle: value("handle"),
    csrf: value("csrf_token"),
    offered: boxes.map((box) => box[1] as string),
    checked: boxes.filter((box) => box[2]).map((box) => box[1] as string),
    cookies: cookiesOf(response),
    html,
  };
}

/** POSTs the consent form: `scopes` ticked, Allow (or Deny). */
export function decide(
  member: TestMember,
  path: string,
  form: ConsentForm,
  scopes: string[],
  decision = "approve",
  overrides: Record<string, string> = {},
): Promise<Response> {
  const body = new URLSearchParams({ handle: form.handle, csrf_token: form.csrf, decision, ...overrides });
  for (const scope of scopes) body.append("scope", scope);
  return call("POST", path, {
    body: body.toString(),
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: BASE,
      Cookie: [`__Host-session=${member.cookie}`, ...form.cookies].join("; "),
    },
  });
}

export async function exchange(params: Record<string, string>): Promise<Response> {
  return call("POST", "/oauth/token", {
    body: new URLSearchParams(params).toString(),
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  scope: string;
  clientId: string;
}

/** The whole flow: register, consent as `member` with `scopes`, exchange the code. */
export async function authorized(member: TestMember, scopes: string[], name = "Test assistant"): Promise<Tokens> {
  const { clientId, verifier, path } = await newAuthorization({ state: "st4te", scope: scopes.join(" ") }, name);
  const form = await openConsent(member, path);
  const decided = await decide(member, path, form, scopes);
  expect(decided.status, await decided.clone().text()).toBe(302);
  const location = new URL(decided.headers.get("Location") as string);
  expect(location.searchParams.get("state")).toBe("st4te");
  const code = location.searchParams.get("code") as string;
  const response = await exchange({
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
  });
  const tokens = await json(response);
  expect(response.status, JSON.stringify(tokens)).toBe(200);
  return { ...(tokens as Tokens), clientId };
}
