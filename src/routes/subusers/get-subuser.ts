import type { RouteHandler } from "@hono/zod-openapi";
import { periodUsageOf } from "../../domain/subusers/cap-usage";
import { findSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubuser, subuserIdParam, subuserSchema } from "../../resources/subuser";

export const route = apiRoute({
  operationId: "getSubuser",
  method: "get",
  path: "/subusers/{id}",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "Get a sub-user",
  description: "The sub-user's settings; never its password.",
  request: { params: subuserIdParam },
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(subuserSchema, "The sub-user.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subuser = await findSubuser(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  const usage = await periodUsageOf(c.get("ctx"), subuser.accountId, [subuser.id]);
  return c.json(presentSubuser(subuser, usage.get(subuser.id)), 200);
};
