import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { findSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { presentSubuser, subuserIdParam, subuserSchema } from "../../schemas/subuser";

export const route = apiRoute({
  method: "get",
  path: "/subusers/{id}",
  tags: ["Sub-users"],
  summary: "Get a sub-user",
  request: { params: subuserIdParam },
  errors: ["subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(subuserSchema, "The sub-user (never its password).") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subuser = await findSubuser(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json(presentSubuser(subuser), 200);
};
