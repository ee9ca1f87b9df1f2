import { beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { BASE, env, json } from "../helpers/http";
import { invited, memberCall, ownerOf, type TestMember } from "../helpers/members";
import {
  authorized,
  authorizeUrl,
  call,
  decide,
  exchange,
  newAuthorization,
  openConsent,
  pkce,
  REDIRECT_URI,
  registerClient,
} from "../helpers/oauth";
import { post } from "../mcp/client";

const rpc = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 1, method, params });
const toolNames = async (token: string) =>
  ((await json(await post(token, rpc("tools/list")))).result.tools as Array<{ name: string }>).map((t) => t.name);
const callTool = async (token: string, name: string, args: Record<string, unknown> = {}) =>
  post(token, rpc("tools/call", { name, arguments: args }));

let account: TestAccount;
let owner: TestMember;

beforeAll(async () => {
  account = await createAccount();
  owner = await ownerOf(account);
});

describe("OAuth for /mcp: discovery and registration", () => {
  it("publishes protected-resource and authorization-server metadata (S256 only)", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const resource = await json(await call("GET", path));
      expect(resource).toMatchObject({ resource: `${BASE}/mcp`, authorization_servers: [BASE] });
      expect(resource.scopes_supported).toContain("subusers:write");
      expect(resource.scopes_supported).not.toContain("api_keys:write");
    }
    const server = await json(await call("GET", "/.well-known/oauth-authorization-server"));
    expect(server).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("answers /mcp without credentials 401 pointing at the resource metadata", async () => {
    const response = await post(null, rpc("tools/list"));
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toContain(
      `resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it("registers a client dynamically", async () => {
    expect(await registerClient()).toMatch(/\S+/);
  });

  it("asks a browser without a session to sign in on the page, then shows the consent", async () => {
    const { path } = await newAuthorization();
    const page = await call("GET", path);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('action="/oauth/authorize/sign-in?');
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(html).not.toContain("<script");
    const signIn = await call("POST", `/oauth/authorize/sign-in${new URL(`${BASE}${path}`).search}`, {
      body: new URLSearchParams({ email: owner.email, password: owner.password }).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: BASE, "CF-Connecting-IP": "10.7.7.7" },
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("Location")).toBe(path);
    expect(signIn.headers.get("Set-Cookie")).toContain("__Host-session=");
  });
});

describe("OAuth for /mcp: the authorization request", () => {
  it("refuses PKCE plain and a missing challenge, and a missing or wrong verifier at the token endpoint", async () => {
    const clientId = await registerClient();
    const base = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT_URI, state: "s" };
    for (const params of [{ code_challenge: "a".repeat(43), code_challenge_method: "plain" }, {}]) {
      const response = await call("GET", authorizeUrl({ ...base, ...params }), {
        headers: { Cookie: `__Host-session=${owner.cookie}` },
      });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get("Location") as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get("error")).toBe("invalid_request");
    }

    const { verifier, challenge } = await pkce();
    const path = authorizeUrl({ ...base, code_challenge: challenge, code_challenge_method: "S256" });
    const decided = await decide(owner, path, await openConsent(owner, path), ["account:read"]);
    const code = new URL(decided.headers.get("Location") as string).searchParams.get("code") as string;
    const grant = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId };
    expect((await exchange(grant)).status).toBe(400);
    expect((await exchange({ ...grant, code_verifier: `${verifier.slice(1)}x` })).status).toBe(400);
  });

  it("refuses a redirect URI that is not exactly a registered one, without redirecting", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkce();
    for (const redirect of [`${REDIRECT_URI}/x`, "http://127.0.0.1:9/callback?x=1", "https://evil.example/callback"]) {
      const response = await call(
        "GET",
        authorizeUrl({
          response_type: "code",
          client_id: clientId,
          redirect_uri: redirect,
          code_challenge: challenge,
          code_challenge_method: "S256",
        }),
        { headers: { Cookie: `__Host-session=${owner.cookie}` } },
      );
      expect(response.status, redirect).toBe(400);
      expect(response.headers.get("Location")).toBeNull();
    }
  });

  it("deny redirects with access_denied", async () => {
    const { path } = await newAuthorization({ state: "d" });
    const response = await decide(owner, path, await openConsent(owner, path), [], "deny");
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location") as string);
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe("d");
  });

  it("refuses a consent POST without the session's CSRF token or from another origin", async () => {
    const { path } = await newAuthorization();
    const form = await openConsent(owner, path);
    expect((await decide(owner, path, form, ["account:read"], "approve", { csrf_token: "forged" })).status).toBe(403);
    const foreign = await call("POST", path, {
      body: new URLSearchParams({ handle: form.handle, csrf_token: form.csrf, decision: "approve" }).toString(),
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: "https://evil.example",
        Cookie: [`__Host-session=${owner.cookie}`, ...form.cookies].join("; "),
      },
    });
    expect(foreign.status).toBe(403);
  });
});

describe("OAuth for /mcp: tokens bound to the member and the grant", () => {
  it("offers only the role's scopes, and grants no more than the role has whatever the form says", async () => {
    const viewer = await invited(owner, "viewer");
    const { path } = await newAuthorization({ scope: "subusers:read subusers:write" });
    const form = await openConsent(viewer, path);
    expect(form.offered).toContain("subusers:read");
    expect(form.offered).not.toContain("subusers:write");
    expect(form.checked).toEqual(["subusers:read"]);
    const decided = await decide(viewer, path, form, ["subusers:read", "subusers:write", "billing:write"]);
    expect(decided.status).toBe(302);
    const grants = await json(await memberCall(viewer, "GET", "/v1/oauth/grants"));
    expect(grants.data[0].scopes).toEqual(["subusers:read"]);
  });

  it("lists and calls only the granted tools; the audit log names the member and the client", async () => {
    const tokens = await authorized(owner, ["subusers:write"], "Scoped assistant");
    const names = await toolNames(tokens.access_token);
    expect(names).toContain("createSubuser");
    expect(names).toContain("listSubusers");
    expect(names).not.toContain("getAccount");
    expect(names).not.toContain("createOrder");

    const refused = await json(await callTool(tokens.access_token, "getAccount"));
    expect(refused.result.isError).toBe(true);
    expect(refused.result.structuredContent.code).toBe("insufficient_scope");

    const created = await json(
      await callTool(tokens.access_token, "createSubuser", { label: `oauth-${Date.now()}`, products: ["residential"] }),
    );
    expect(created.result.isError, JSON.stringify(created)).toBeUndefined();
    const subuserId = created.result.structuredContent.id;
    const audit = await json(await memberCall(owner, "GET", `/v1/audit-events?resource=${subuserId}`));
    expect(audit.data[0]).toMatchObject({
      action: "subuser.created",
      actor_key: null,
      actor_member: { id: owner.id, email: owner.email },
      actor_client: { id: tokens.clientId, name: "Scoped assistant" },
    });
  });

  it("keeps a token to /mcp: /v1 refuses it, and a refresh token is no access token", async () => {
    const tokens = await authorized(owner, ["account:read"]);
    expect((await call("GET", "/v1/account", { token: tokens.access_token })).status).toBe(401);
    expect((await post(tokens.refresh_token, rpc("tools/list"))).status).toBe(401);
    expect((await post(tokens.access_token, rpc("tools/list"))).status).toBe(200);
  });

  it("rotates refresh tokens: each use gives a new pair, and an older refresh token stops", async () => {
    const tokens = await authorized(owner, ["account:read"]);
    const refresh = (token: string) =>
      exchange({ grant_type: "refresh_token", refresh_token: token, client_id: tokens.clientId });
    const second = await json(await refresh(tokens.refresh_token));
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect((await post(second.access_token, rpc("tools/list"))).status).toBe(200);
    const third = await json(await refresh(second.refresh_token));
    expect(third.access_token).toBeDefined();
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
  });

  it("a demotion narrows the grant at once; a revocation stops its tokens on the next call", async () => {
    const admin = await invited(owner, "admin");
    const tokens = await authorized(admin, ["subusers:write", "account:read"]);
    expect(await toolNames(tokens.access_token)).toContain("createSubuser");

    const demoted = await memberCall(owner, "PATCH", `/v1/members/${admin.id}`, { body: { role: "viewer" } });
    expect(demoted.status).toBe(200);
    const names = await toolNames(tokens.access_token);
    expect(names).not.toContain("createSubuser");
    expect(names).toContain("listSubusers");

    // Another member's grant answers as one that does not exist; the owner sees and revokes it.
    const developer = await invited(owner, "developer");
    const grants = await json(await memberCall(owner, "GET", "/v1/oauth/grants"));
    const grant = grants.data.find((row: { member: { id: string } }) => row.member.id === admin.id);
    expect(grant).toMatchObject({ object: "oauth_grant", client_name: "Test assistant" });
    expect((await memberCall(developer, "DELETE", `/v1/oauth/grants/${grant.id}`)).status).toBe(404);
    expect((await call("GET", "/v1/oauth/grants", { token: account.token })).status).toBe(403);

    const started = Date.now();
    expect((await memberCall(owner, "DELETE", `/v1/oauth/grants/${grant.id}`)).status).toBe(200);
    const after = await post(tokens.access_token, rpc("tools/list"));
    expect(after.status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(after.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    const refreshed = await exchange({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: tokens.clientId,
    });
    expect(refreshed.status).toBe(400);
  });

  it("removing a member revokes its connected applications: their tokens stop, and the grants are recorded revoked", async () => {
    const leaving = await invited(owner, "developer");
    const tokens = await authorized(leaving, ["subusers:read"]);
    expect((await post(tokens.access_token, rpc("tools/list"))).status).toBe(200);
    expect((await memberCall(owner, "DELETE", `/v1/members/${leaving.id}`)).status).toBe(200);
    expect((await post(tokens.access_token, rpc("tools/list"))).status).toBe(401);
    const rows = await env.DB.prepare("SELECT revoked_at FROM oauth_grants WHERE member_id = ?")
      .bind(leaving.id)
      .all<{ revoked_at: number | null }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]?.revoked_at).not.toBeNull();
  });

  it("leaves API keys on /mcp as they were", async () => {
    const response = await post(account.token, rpc("tools/list"));
    expect(response.status).toBe(200);
    expect(await toolNames(account.token)).toContain("getAccount");
  });
});
