import { AuthorizationError, type AuthRequest, authorizationErrorRedirect } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { memberActor, memberGuard } from "../../domain/members/members";
import { type ActiveSession, csrfTokenFor, sessionForToken, signIn } from "../../domain/members/sessions";
import { attachProviderGrant, recordGrant } from "../../domain/oauth/grants";
import { authorizationServer, type GrantProps } from "../../domain/oauth/provider";
import type { AppEnv } from "../../env";
import { clientAddress } from "../../middleware/client-address";
import { adoptSession, sessionCookieToken } from "../../middleware/session-cookie";
import { now } from "../../platform/clock";
import { timingSafeEqual } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { type KeyScopes, type MemberRole, oauthScopesOf } from "../../vocabulary";
import { consentPage, problemPage, signInPage } from "./page";

/**
 * `/oauth/authorize`: the consent page of the OAuth flow. The library validates the request (the client, its exact
 * redirect URI, PKCE S256); a member signed in with the session cookie (or signing in on this page) picks which of
 * its role's scopes the client gets, and Allow completes the authorization bound to the member and a grant row.
 */

type C = Context<AppEnv>;

/** What a page may load and where its forms may go (a form's redirect counts): nothing else, never framed. */
function pageHeaders(formTargets: string[] = []): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": `default-src 'none'; base-uri 'none'; form-action 'self'${formTargets.map((target) => ` ${target}`).join("")}; frame-ancestors 'none'`,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // Not `no-referrer`: with it a browser sends `Origin: null` on the page's own form posts, which the origin check
    // refuses. `same-origin` still tells the client's site nothing.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
  };
}

function html(body: string, status: number, headers: Headers | Record<string, string> = {}, formTargets?: string[]) {
  const all = new Headers(headers);
  for (const [name, value] of Object.entries(pageHeaders(formTargets))) all.set(name, value);
  return new Response(body, { status, headers: all });
}

const oauthOf = (c: C) => authorizationServer(new URL(c.req.url).origin).getOAuthApi(c.env);

/** Parses the authorization request; a failure the client may hear of is redirected to it, any other rendered. */
async function parsed(c: C): Promise<AuthRequest | Response> {
  try {
    const request = await oauthOf(c).parseAuthRequest(c.req.raw);
    // PKCE is required of every client, confidential or not (the library asks it of public clients only).
    if (!request.codeChallenge) {
      return c.redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE (S256) is required."), 302);
    }
    return request;
  } catch (error) {
    if (error instanceof AuthorizationError && error.redirectTo) return c.redirect(error.redirectTo, 302);
    if (error instanceof AuthorizationError) return html(problemPage(error.description), 400);
    throw error;
  }
}

interface SignedIn {
  session: ActiveSession;
  cookie: string;
  role: MemberRole;
  roleScopes: KeyScopes | null;
}

/** The member signed in with the session cookie, as its guard accepts it now (role included), or null. */
async function signedIn(c: C): Promise<SignedIn | null> {
  const cookie = sessionCookieToken(c);
  const session = cookie ? await sessionForToken(c.get("ctx"), cookie) : null;
  if (!cookie || !session) return null;
  const admitted = await memberGuard(c.get("ctx"), session.memberId).admit(null);
  if (admitted.outcome !== "admitted") {
    if (admitted.outcome === "limited") throw new ApiError("rate_limited");
    return null;
  }
  const live = admitted.config.tokens?.find((token) => token.hash === session.tokenHash);
  if (!live || (live.until !== null && live.until <= now())) return null;
  const role = (admitted.config.role ?? session.role) as MemberRole;
  return { session, cookie, role, roleScopes: (admitted.config.scopes ?? null) as KeyScopes | null };
}

/** A form posted to this page must come from this origin (browsers send `Origin` on a POST). */
function fromOwnOrigin(c: C): boolean {
  const origin = c.req.header("Origin");
  return origin === undefined || origin === new URL(c.req.url).origin || origin === c.env.API_ORIGIN;
}

const actionOf = (c: C, path: string) => `${path}${new URL(c.req.url).search}`;

export async function showConsent(c: C, error?: string): Promise<Response> {
  const request = await parsed(c);
  if (request instanceof Response) return request;
  const member = await signedIn(c);
  if (!member) {
    return html(signInPage({ action: actionOf(c, "/oauth/authorize/sign-in"), askMfa: false, askAccount: false }), 200);
  }
  const oauth = oauthOf(c);
  const details = await oauth.describeConsent(request);
  const consent = await oauth.beginConsent(request);
  const offered = oauthScopesOf(member.roleScopes);
  const requested = request.scope.length > 0 ? request.scope : offered;
  const body = consentPage({
    clientName: details.clientName,
    redirectHost: details.redirectHost,
    redirectIsLoopback: details.redirectIsLoopback,
    email: member.session.email,
    role: member.role,
    offered,
    checked: new Set(requested.filter((scope) => offered.includes(scope))),
    handle: consent.handle,
    csrfToken: await csrfTokenFor(c.env, member.cookie),
    action: actionOf(c, "/oauth/authorize"),
    error,
  });
  return html(body, error ? 400 : 200, consent.headers, [new URL(request.redirectUri).origin]);
}

export async function decideConsent(c: C): Promise<Response> {
  if (!fromOwnOrigin(c)) return html(problemPage("This form was posted from another site."), 403);
  const member = await signedIn(c);
  if (!member) return html(problemPage("Your session has ended: start the connection again."), 401);
  const form = await c.req.formData();
  const sent = String(form.get("csrf_token") ?? "");
  if (sent.length > 128 || !(await timingSafeEqual(sent, await csrfTokenFor(c.env, member.cookie)))) {
    return html(problemPage("This form has expired: start the connection again."), 403);
  }
  const handle = String(form.get("handle") ?? "");
  const oauth = oauthOf(c);
  try {
    if (form.get("decision") !== "approve") {
      const denied = await oauth.denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    // Never more than the role holds now, whatever the form says.
    const offered = oauthScopesOf(member.roleScopes);
    const scope = [...new Set(form.getAll("scope").map(String))].filter((picked) => offered.includes(picked));
    if (scope.length === 0) return showConsent(c, "Choose at least one permission, or deny.");
    const approved = await oauth.approveConsent(c.req.raw, handle, { scope });
    const details = await oauth.describeConsent(approved.request);
    const { session } = member;
    const ctx = {
      ...c.get("ctx"),
      actor: memberActor(
        { id: session.memberId, email: session.email },
        { keyId: null, sourceIp: clientAddress(c), requestId: c.get("requestId") },
      ),
    };
    const grant = await recordGrant(ctx, {
      accountId: session.accountId,
      memberId: session.memberId,
      clientId: approved.request.clientId,
      clientName: details.clientName.slice(0, 200),
      redirectHost: details.redirectHost,
      scopes: scope,
    });
    const props: GrantProps = {
      grantId: grant.id,
      memberId: session.memberId,
      accountId: session.accountId,
      clientId: approved.request.clientId,
    };
    const { redirectTo } = await oauth.completeAuthorization({
      request: approved.request,
      userId: session.memberId,
      metadata: { grant: grant.id },
      scope,
      props,
    });
    // The code is `<user>:<grant>:<secret>`: the library's grant id, kept to delete its KV records at revocation.
    const providerGrantId = new URL(redirectTo).searchParams.get("code")?.split(":")[1];
    if (providerGrantId) await attachProviderGrant(ctx, grant.id, providerGrantId);
    approved.headers.set("Location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (error) {
    if (error instanceof AuthorizationError) {
      return html(problemPage(`${error.description} Start the connection again from the application.`), 400);
    }
    throw error;
  }
}

/** The sign-in form of the page: the members' own sign-in (throttled alike), then back to the consent. */
export async function signInForConsent(c: C): Promise<Response> {
  if (!fromOwnOrigin(c)) return html(problemPage("This form was posted from another site."), 403);
  const form = await c.req.formData();
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === "string" && value.length > 0 && value.length <= 200 ? value : undefined;
  };
  const email = field("email") ?? "";
  const action = actionOf(c, "/oauth/authorize/sign-in");
  try {
    const signed = await signIn(
      c.get("ctx"),
      { email, password: field("password") ?? "", mfaCode: field("mfa_code"), account: field("account") },
      { ip: clientAddress(c), userAgent: c.req.header("User-Agent") ?? null, requestId: c.get("requestId") },
    );
    await adoptSession(c, signed);
    return c.redirect(actionOf(c, "/oauth/authorize"), 303);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    const askMfa = error.code === "mfa_required" || field("mfa_code") !== undefined;
    const askAccount = error.code === "account_required" || field("account") !== undefined;
    return html(signInPage({ action, error: error.message, email, askMfa, askAccount }), error.status);
  }
}
