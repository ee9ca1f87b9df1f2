import { type RouteHandler, z } from "@hono/zod-openapi";
import { signInWithPasskey } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { clientAddress } from "../../middleware/client-address";
import { relyingParty } from "../../middleware/relying-party";
import { adoptSession } from "../../middleware/session-cookie";
import { jsonBody, jsonContent, publicRoute } from "../../platform/route-definitions";
import { presentSignedIn, signedInSchema } from "../../resources/member";
import { authenticationCredentialSchema, exampleCredential } from "../../resources/passkey";

const body = z.strictObject({ credential: authenticationCredentialSchema }).openapi("PasskeySignInRequest", {
  example: {
    credential: {
      id: "hX8kq1Zb2Qy3Wv4Ut5Sr6Q",
      rawId: "hX8kq1Zb2Qy3Wv4Ut5Sr6Q",
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0",
        authenticatorData: "SZYN5Yg",
        signature: "MEUCIQDx",
      },
    },
  },
});

export const route = publicRoute({
  operationId: "signInWithPasskey",
  method: "post",
  path: "/auth/sign-in/passkey",
  tags: ["Sign-in"],
  summary: "Sign in with a passkey",
  description:
    "Signs in with the passkey the browser answered `POST /auth/sign-in/passkey/options` with: the same session, " +
    "cookie and CSRF token as `POST /auth/sign-in`. A passkey unlocked by the person's PIN or biometrics is both " +
    "factors, so no password or TOTP code is asked. An unknown or removed passkey, a used or expired challenge, " +
    "another origin or a signature counter that went back answer 401 `invalid_credentials`; attempts count " +
    "against the account's sign-in throttle.",
  request: { body: jsonBody(body) },
  secret: true,
  errors: ["invalid_credentials"],
  responses: { 201: jsonContent(signedInSchema, "Signed in: the session cookie is set.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { credential } = c.req.valid("json");
  const signed = await signInWithPasskey(c.get("ctx"), credential, relyingParty(c), {
    ip: clientAddress(c),
    userAgent: c.req.header("User-Agent") ?? null,
    requestId: c.get("requestId"),
  });
  await adoptSession(c, signed);
  return c.json(presentSignedIn(signed), 201);
};
