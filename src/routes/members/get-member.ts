import type { RouteHandler } from "@hono/zod-openapi";
import { findMember } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { memberIdParam, memberSchema, presentMember } from "../../resources/member";

export const route = apiRoute({
  operationId: "getMember",
  method: "get",
  path: "/members/{id}",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "Get a member",
  request: { params: memberIdParam },
  errors: ["member_not_found"],
  responses: { 200: jsonContent(memberSchema, "The member.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const member = await findMember(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentMember(member), 200);
};
