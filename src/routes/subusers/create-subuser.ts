import { type RouteHandler, z } from "@hono/zod-openapi";
import { createSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  alertOnNewSourceSchema,
  dailyLimitSchema,
  labelSchema,
  lifetimeLimitSchema,
  limitSchema,
  presentSubuser,
  productListSchema,
  spikeActionSchema,
  spikeSensitivitySchema,
  subuserExpirySchema,
  subuserWithPasswordSchema,
  targetRulesInputSchema,
  toBytes,
  toTargetRules,
  trafficLimitSchema,
} from "../../resources/subuser";

const body = z
  .strictObject({
    label: labelSchema,
    products: productListSchema,
    concurrent_max: limitSchema.optional().openapi({ description: "Default: the plan's limit." }),
    rps_max: limitSchema.optional().openapi({ description: "Default: the plan's limit." }),
    traffic_limit_gb: trafficLimitSchema.optional(),
    daily_limit_gb: dailyLimitSchema.optional(),
    lifetime_limit_gb: lifetimeLimitSchema.optional(),
    target_rules: targetRulesInputSchema.optional(),
    expires_at: subuserExpirySchema.optional(),
    alert_on_new_source: alertOnNewSourceSchema.optional(),
    spike_sensitivity: spikeSensitivitySchema.optional(),
    spike_action: spikeActionSchema.optional(),
  })
  .openapi("SubuserCreate", { example: { label: "scraper-eu-1", products: ["residential"], concurrent_max: 100 } });

export const route = apiRoute({
  operationId: "createSubuser",
  method: "post",
  path: "/subusers",
  tags: ["Sub-users"],
  summary: "Create a sub-user",
  description:
    "The gateway `name` is generated and the password is random; the password is shown only in this response. " +
    "`products` is fixed for the sub-user's life. Limits default to the plan's and may not exceed it.",
  request: { body: jsonBody(body) },
  secret: true,
  errors: ["label_taken", "over_plan_limit", "subuser_scope_mismatch", "feature_not_in_plan"],
  responses: { 201: jsonContent(subuserWithPasswordSchema, "The new sub-user with its password.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { subuser, password } = await createSubuser(c.get("ctx"), c.get("principal"), {
    label: input.label,
    products: input.products,
    concurrentMax: input.concurrent_max,
    rpsMax: input.rps_max,
    trafficLimitBytes: toBytes(input.traffic_limit_gb),
    dailyLimitBytes: toBytes(input.daily_limit_gb),
    lifetimeLimitBytes: toBytes(input.lifetime_limit_gb),
    targetRules: toTargetRules(input.target_rules),
    expiresAt: input.expires_at,
    alertOnNewSource: input.alert_on_new_source,
    spikeSensitivity: input.spike_sensitivity,
    spikeAction: input.spike_action,
  });
  return c.json({ ...presentSubuser(subuser), password }, 201);
};
