import type { RouteHandler } from "@hono/zod-openapi";
import { removePasskey } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { passkeyIdParam } from "../../resources/passkey";

export const route = apiRoute({
  operationId: "removePasskey",
  method: "delete",
  path: "/auth/passkeys/{id}",
  tags: ["Sign-in"],
  session: true,
  summary: "Remove a passkey",
  description:
    "The passkey signs nobody in from now on (remove it from the device too). Sessions it opened stay: end them " +
    "in `DELETE /auth/sessions/{id}` or sign out everywhere.",
  request: { params: passkeyIdParam },
  errors: ["passkey_not_found"],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await removePasskey(c.get("ctx"), c.get("principal"), id);
  return c.json({ id, deleted: true as const }, 200);
};
