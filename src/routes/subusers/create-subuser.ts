import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { createSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import {
  labelSchema,
  limitSchema,
  presentSubuser,
  productListSchema,
  subuserWithPasswordSchema,
} from "../../schemas/subuser";

const body = z
  .strictObject({
    label: labelSchema,
    products: productListSchema,
    concurrent_max: limitSchema.optional().openapi({ description: "Default: the plan's limit." }),
    rps_max: limitSchema.optional().openapi({ description: "Default: the plan's limit." }),
  })
  .openapi("SubuserCreate", { example: { label: "scraper-eu-1", products: ["residential"], concurrent_max: 100 } });

export const route = apiRoute({
  method: "post",
  path: "/subusers",
  tags: ["Sub-users"],
  summary: "Create a sub-user",
  description:
    "The gateway `name` is generated and the password is random; the password is shown only in this response. " +
    "`products` is fixed for the sub-user's life. Limits default to the plan's and may not exceed it.",
  request: { body: jsonBody(body) },
  errors: ["label_taken", "over_plan_limit", "subuser_scope_mismatch", "feature_not_in_plan"],
  responses: { 201: jsonContent(subuserWithPasswordSchema, "The new sub-user with its password.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  const { subuser, password } = await createSubuser(
    domainContext(c.env),
    c.var.principal,
    account,
    c.req.valid("json"),
  );
  return c.json({ ...presentSubuser(subuser), password }, 201);
};
