import type { RouteHandler } from "@hono/zod-openapi";
import { passkeyRegistrationOptions } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { relyingParty } from "../../middleware/relying-party";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { creationOptionsSchema } from "../../resources/passkey";

export const route = apiRoute({
  operationId: "createPasskeyOptions",
  method: "post",
  path: "/auth/passkeys/options",
  tags: ["Sign-in"],
  session: true,
  summary: "Start adding a passkey",
  description:
    "The WebAuthn options for adding a passkey to the signed-in member: give them to " +
    "`navigator.credentials.create` (after `PublicKeyCredential.parseCreationOptionsFromJSON`), then send what it " +
    "returns to `POST /auth/passkeys` within five minutes. 409 `passkey_limit` once the member holds 10.",
  errors: ["passkey_limit"],
  responses: { 200: jsonContent(creationOptionsSchema, "The options, with a new challenge.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const options = await passkeyRegistrationOptions(c.get("ctx"), c.get("principal"), relyingParty(c));
  return c.json(options, 200);
};
