import type { RouteHandler } from "@hono/zod-openapi";
import { addPasskey } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { relyingParty } from "../../middleware/relying-party";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { newPasskeySchema, passkeySchema, presentPasskey } from "../../resources/passkey";

export const route = apiRoute({
  operationId: "addPasskey",
  method: "post",
  path: "/auth/passkeys",
  tags: ["Sign-in"],
  session: true,
  summary: "Add a passkey",
  description:
    "Adds the passkey the browser created from `POST /auth/passkeys/options` (its challenge is used up either " +
    "way): from then on the member can sign in with it (`POST /auth/sign-in/passkey`) without a password or TOTP " +
    "code. 400 `passkey_rejected` when the answer does not verify (an unknown, used or expired challenge, another " +
    "origin, no user verification, a passkey already added).",
  request: { body: jsonBody(newPasskeySchema) },
  errors: ["passkey_rejected", "passkey_limit"],
  responses: { 201: jsonContent(passkeySchema, "The passkey, added.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { name, credential } = c.req.valid("json");
  const row = await addPasskey(c.get("ctx"), c.get("principal"), { name, credential }, relyingParty(c));
  return c.json(presentPasskey(row), 201);
};
