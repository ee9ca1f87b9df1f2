import type { RouteHandler } from "@hono/zod-openapi";
import { passkeySignInOptions } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { relyingParty } from "../../middleware/relying-party";
import { jsonContent, publicRoute } from "../../platform/route-definitions";
import { requestOptionsSchema } from "../../resources/passkey";

export const route = publicRoute({
  operationId: "createPasskeySignInOptions",
  method: "post",
  path: "/auth/sign-in/passkey/options",
  tags: ["Sign-in"],
  summary: "Start signing in with a passkey",
  description:
    "The WebAuthn options for signing in with a passkey: give them to `navigator.credentials.get` (after " +
    "`PublicKeyCredential.parseRequestOptionsFromJSON`); the person picks one of their passkeys for this site. " +
    "Send the answer to `POST /auth/sign-in/passkey` within five minutes.",
  errors: [],
  responses: { 200: jsonContent(requestOptionsSchema, "The options, with a new challenge.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const options = await passkeySignInOptions(c.get("ctx"), relyingParty(c));
  return c.json(options, 200);
};
