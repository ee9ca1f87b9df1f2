import { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { clientAddressLimit } from "../../middleware/api-key-auth";
import { assertSameOrigin } from "../../middleware/authenticate";
import { jsonBody } from "../../middleware/json-body";
import { validationHook } from "../../platform/validation";
import * as acceptInvitation from "./accept-invitation";
import * as addPasskey from "./add-passkey";
import * as changePassword from "./change-password";
import * as completePasswordReset from "./complete-password-reset";
import * as disableMemberMfa from "./disable-member-mfa";
import * as enrollMemberMfa from "./enroll-member-mfa";
import * as getSession from "./get-session";
import * as listPasskeys from "./list-passkeys";
import * as listSessions from "./list-sessions";
import * as passkeyOptions from "./passkey-options";
import * as passkeySignInOptions from "./passkey-sign-in-options";
import * as removePasskey from "./remove-passkey";
import * as requestPasswordReset from "./request-password-reset";
import * as revokeSession from "./revoke-session";
import * as signIn from "./sign-in";
import * as signInWithPasskey from "./sign-in-with-passkey";
import * as signOut from "./sign-out";
import * as signOutEverywhere from "./sign-out-everywhere";
import * as verifyMemberMfa from "./verify-member-mfa";

/** The operations that hold no credential (how one is got), served by `publicAuthRoutes`. */
const PUBLIC = [
  signIn,
  passkeySignInOptions,
  signInWithPasskey,
  acceptInvitation,
  requestPasswordReset,
  completePasswordReset,
];

/** A signed-in member's own operations, behind the version's auth (its session cookie). */
export function authRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getSession.route, getSession.handler);
  app.openapi(signOut.route, signOut.handler);
  app.openapi(signOutEverywhere.route, signOutEverywhere.handler);
  app.openapi(listSessions.route, listSessions.handler);
  app.openapi(revokeSession.route, revokeSession.handler);
  app.openapi(changePassword.route, changePassword.handler);
  app.openapi(enrollMemberMfa.route, enrollMemberMfa.handler);
  app.openapi(verifyMemberMfa.route, verifyMemberMfa.handler);
  app.openapi(disableMemberMfa.route, disableMemberMfa.handler);
  app.openapi(listPasskeys.route, listPasskeys.handler);
  app.openapi(passkeyOptions.route, passkeyOptions.handler);
  app.openapi(addPasskey.route, addPasskey.handler);
  app.openapi(removePasskey.route, removePasskey.handler);
  // Documented with the version's operations; served by `publicAuthRoutes`, ahead of its auth.
  for (const { route } of PUBLIC) {
    // Its middleware is the serving router's, not part of the description.
    const { middleware: _, ...documented } = route;
    app.openAPIRegistry.registerPath(documented);
  }
}

const sameOrigin = createMiddleware<AppEnv>(async (c, next) => {
  assertSameOrigin(c);
  await next();
});

/**
 * Sign-in, accepting an invitation and password resets: mounted at the version's base before its auth. Each call
 * counts against the client address's window (as calls without a key do), and a browser's `Origin` must be the
 * API's own (no other site signs a visitor in).
 */
export function publicAuthRoutes(): OpenAPIHono<AppEnv> {
  const open = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  for (const operation of PUBLIC) open.use(operation.route.getRoutingPath(), clientAddressLimit, sameOrigin, jsonBody);
  open.openapi(signIn.route, signIn.handler);
  open.openapi(passkeySignInOptions.route, passkeySignInOptions.handler);
  open.openapi(signInWithPasskey.route, signInWithPasskey.handler);
  open.openapi(acceptInvitation.route, acceptInvitation.handler);
  open.openapi(requestPasswordReset.route, requestPasswordReset.handler);
  open.openapi(completePasswordReset.route, completePasswordReset.handler);
  return open;
}
