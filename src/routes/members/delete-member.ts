import type { RouteHandler } from "@hono/zod-openapi";
import { removeMember } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { memberIdParam } from "../../resources/member";

export const route = apiRoute({
  operationId: "deleteMember",
  method: "delete",
  path: "/members/{id}",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "Remove a member",
  description:
    "The member's sessions end and every request of theirs answers 401 from the next one on. The API keys they " +
    "made stay the account's (revoke them apart). Below an owner, only members ranked under the caller (403 " +
    "`insufficient_scope`); the account keeps at least one owner (409 `last_owner`).",
  request: { params: memberIdParam },
  errors: ["member_not_found", "last_owner"],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await removeMember(c.get("ctx"), c.get("principal"), id);
  return c.json({ id, deleted: true as const }, 200);
};
