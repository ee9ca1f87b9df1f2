import type { RouteHandler } from "@hono/zod-openapi";
import { revokeGrant } from "../../domain/oauth/grants";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { oauthGrantIdParam } from "../../resources/oauth-grant";

export const route = apiRoute({
  operationId: "revokeOAuthGrant",
  method: "delete",
  path: "/oauth/grants/{id}",
  tags: ["Connected applications"],
  session: true,
  summary: "Revoke a connected application",
  description:
    "Its access and refresh tokens stop at once: the next call to the MCP server with them answers 401. The " +
    "signed-in member's own grants, or any of the account's for an owner or an admin (another's answers 404).",
  request: { params: oauthGrantIdParam },
  errors: ["not_found"],
  responses: { 200: jsonContent(deletedSchema, "Revoked.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await revokeGrant(c.get("ctx"), c.get("principal"), id, new URL(c.req.url).origin);
  return c.json({ id, deleted: true as const }, 200);
};
