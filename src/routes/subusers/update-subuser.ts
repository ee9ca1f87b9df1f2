import { type RouteHandler, z } from "@hono/zod-openapi";
import { subuserStatuses } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { updateSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { labelSchema, limitSchema, presentSubuser, subuserIdParam, subuserSchema } from "../../schemas/subuser";

const body = z
  .strictObject({
    label: labelSchema.optional(),
    status: z.enum(subuserStatuses).optional(),
    concurrent_max: limitSchema.optional(),
    rps_max: limitSchema.optional(),
  })
  .openapi("SubuserUpdate", { example: { status: "disabled" } });

export const route = apiRoute({
  method: "patch",
  path: "/subusers/{id}",
  tags: ["Sub-users"],
  summary: "Update a sub-user",
  description:
    "Only `label`, `status`, `concurrent_max` and `rps_max`; `products` is fixed (delete and recreate). " +
    "Takes effect on the gateway's next decision: disabled sub-users get 403 at once.",
  request: { params: subuserIdParam, body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "label_taken", "over_plan_limit"],
  responses: { 200: jsonContent(subuserSchema, "The updated sub-user.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  const ctx = domainContext(c.env);
  const subuser = await updateSubuser(ctx, c.var.principal, account, c.req.valid("param").id, c.req.valid("json"));
  return c.json(presentSubuser(subuser), 200);
};
