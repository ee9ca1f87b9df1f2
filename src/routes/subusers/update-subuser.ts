import { type RouteHandler, z } from "@hono/zod-openapi";
import { subuserStatuses } from "../../db/schema";
import { assertBoundMayChange } from "../../domain/scope";
import { periodUsageOf } from "../../domain/subusers/cap-usage";
import { updateSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  alertOnNewSourceSchema,
  dailyLimitSchema,
  labelSchema,
  lifetimeLimitSchema,
  limitSchema,
  presentSubuser,
  spikeActionSchema,
  spikeSensitivitySchema,
  subuserExpirySchema,
  subuserIdParam,
  subuserSchema,
  targetRulesInputSchema,
  toBytes,
  toTargetRules,
  trafficLimitSchema,
} from "../../resources/subuser";

const body = z
  .strictObject({
    label: labelSchema.optional(),
    status: z.enum(subuserStatuses).optional(),
    concurrent_max: limitSchema.optional(),
    rps_max: limitSchema.optional(),
    traffic_limit_gb: trafficLimitSchema.optional(),
    daily_limit_gb: dailyLimitSchema.optional(),
    lifetime_limit_gb: lifetimeLimitSchema.optional(),
    target_rules: targetRulesInputSchema.optional(),
    expires_at: subuserExpirySchema.optional(),
    alert_on_new_source: alertOnNewSourceSchema.optional(),
    spike_sensitivity: spikeSensitivitySchema.optional(),
    spike_action: spikeActionSchema.optional(),
  })
  .openapi("SubuserUpdate", { example: { concurrent_max: 50 } });

/**
 * What a key bound to sub-users may send: what concerns the sub-user's own access (its target rules, once they are
 * a field here; whitelists and passwords have their own operations), never its limits, caps, status or label. A
 * field added to the body later is refused to bound keys until it is listed here.
 */
const BOUND_KEY_FIELDS: ReadonlySet<string> = new Set(["target_rules"]);

export const route = apiRoute({
  operationId: "updateSubuser",
  method: "patch",
  path: "/subusers/{id}",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "Update a sub-user",
  description:
    "Only `label`, `status`, `concurrent_max`, `rps_max`, the caps (`traffic_limit_gb`, `daily_limit_gb`, " +
    "`lifetime_limit_gb`), `target_rules`, `expires_at`, `alert_on_new_source`, `spike_sensitivity` and " +
    "`spike_action`; `products` is fixed (delete and recreate). " +
    "Takes effect on the gateway's next decision: disabled sub-users get 403 at once. A key bound to sub-users " +
    "may change only `target_rules` (limits, caps, expiry, status and label: 403 `subuser_binding`).",
  request: { params: subuserIdParam, body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "subuser_binding", "label_taken", "over_plan_limit"],
  responses: { 200: jsonContent(subuserSchema, "The updated sub-user.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertBoundMayChange(c.get("principal"), Object.keys(c.req.valid("json")), BOUND_KEY_FIELDS);
  const {
    concurrent_max,
    rps_max,
    traffic_limit_gb,
    daily_limit_gb,
    lifetime_limit_gb,
    target_rules,
    expires_at,
    alert_on_new_source,
    spike_sensitivity,
    spike_action,
    ...patch
  } = c.req.valid("json");
  const subuser = await updateSubuser(c.get("ctx"), c.get("principal"), c.req.valid("param").id, {
    ...patch,
    concurrentMax: concurrent_max,
    rpsMax: rps_max,
    trafficLimitBytes: toBytes(traffic_limit_gb),
    dailyLimitBytes: toBytes(daily_limit_gb),
    lifetimeLimitBytes: toBytes(lifetime_limit_gb),
    targetRules: toTargetRules(target_rules),
    expiresAt: expires_at,
    alertOnNewSource: alert_on_new_source,
    spikeSensitivity: spike_sensitivity,
    spikeAction: spike_action,
  });
  const usage = await periodUsageOf(c.get("ctx"), subuser.accountId, [subuser.id]);
  return c.json(presentSubuser(subuser, usage.get(subuser.id)), 200);
};
