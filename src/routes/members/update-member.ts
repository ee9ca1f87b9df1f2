import type { RouteHandler } from "@hono/zod-openapi";
import { updateMember } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { memberChangesSchema, memberIdParam, memberSchema, presentMember } from "../../resources/member";

export const route = apiRoute({
  operationId: "updateMember",
  method: "patch",
  path: "/members/{id}",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "Change a member's role or name",
  description:
    "A new role is in force from the member's next request. Nobody grants more than they have: a role is given " +
    "only by a caller whose own scopes cover it, and below an owner only roles ranked under the caller's own (an " +
    "admin manages developers, billing members and viewers, and gives developer and viewer); else 403 " +
    "`insufficient_scope`. The account keeps at least one owner (409 `last_owner`).",
  request: { params: memberIdParam, body: jsonBody(memberChangesSchema) },
  errors: ["member_not_found", "last_owner"],
  responses: { 200: jsonContent(memberSchema, "The member.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { role, name } = c.req.valid("json");
  const member = await updateMember(c.get("ctx"), c.get("principal"), c.req.valid("param").id, { role, name });
  return c.json(presentMember(member), 200);
};
