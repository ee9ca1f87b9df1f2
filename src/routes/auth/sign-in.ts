import { type RouteHandler, z } from "@hono/zod-openapi";
import { signIn } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { clientAddress } from "../../middleware/client-address";
import { adoptSession } from "../../middleware/session-cookie";
import { email, id, text, token } from "../../platform/fields";
import { jsonBody, jsonContent, publicRoute } from "../../platform/route-definitions";
import { presentSignedIn, signedInSchema } from "../../resources/member";

const body = z
  .strictObject({
    email: email(),
    password: text(200, 1),
    mfa_code: token(/^[0-9a-z-]{6,11}$/, 11)
      .optional()
      .openapi({ description: "A current TOTP code (or a recovery code), when the member enrolled MFA." }),
    account: id("account")
      .optional()
      .openapi({ description: "The account, when the address belongs to members of several (else 409)." }),
  })
  .openapi("SignInRequest", { example: { email: "ops@acme.example", password: "correct horse battery staple" } });

export const route = publicRoute({
  operationId: "signIn",
  method: "post",
  path: "/auth/sign-in",
  tags: ["Sign-in"],
  summary: "Sign in",
  description:
    "A member signs in with email and password (+ `mfa_code` when they enrolled MFA): a new session, its cookie " +
    "set (`__Host-session`: `HttpOnly`, `Secure`, `SameSite=Lax`, `Path=/`, an opaque random token stored hashed; " +
    "a session the browser already held ends), and its CSRF token, which every change made with the cookie sends " +
    "in `X-CSRF-Token`. The session ends after an idle hour, 12 hours after sign-in, at sign-out, or when revoked. " +
    "A wrong email and a wrong password answer alike, 401 `invalid_credentials`. Attempts are throttled per " +
    "address (10 a minute, 100 a day) and per account (60 a minute, 1,000 a day): 429 with `Retry-After`, like " +
    "every call without a credential (60 a minute per client address).",
  request: { body: jsonBody(body) },
  secret: true,
  errors: ["invalid_credentials", "mfa_required", "account_required"],
  responses: { 201: jsonContent(signedInSchema, "Signed in: the session cookie is set.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const ctx = c.get("ctx");
  const signed = await signIn(
    ctx,
    { email: input.email, password: input.password, mfaCode: input.mfa_code, account: input.account },
    { ip: clientAddress(c), userAgent: c.req.header("User-Agent") ?? null, requestId: c.get("requestId") },
  );
  await adoptSession(c, signed);
  return c.json(presentSignedIn(signed), 201);
};
