import type { RouteHandler } from "@hono/zod-openapi";
import { expireBatchNow } from "../../domain/sandbox/lifecycle";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchIdParam, batchSchema, presentBatch } from "../../resources/isp-batch";
import { tags } from "./shared";

export const route = apiRoute({
  operationId: "expireTestIspBatch",
  method: "post",
  path: "/test-helpers/isp/batches/{id}/expire",
  tags,
  sandboxOnly: true,
  scope: { area: "isp" },
  summary: "Expire an ISP batch now (sandbox)",
  description:
    "The batch's period ends now and the lifecycle job acts on it at once, as it would at the real end: an " +
    "auto-renewing batch is renewed and charged (or enters the 7-day grace when the balance cannot pay), others " +
    "enter grace. A batch already in grace is released now. Sandbox keys only.",
  request: { params: batchIdParam },
  errors: ["not_found", "batch_not_active", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(batchSchema, "The batch after the expiry.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentBatch(await expireBatchNow(c.get("ctx"), c.get("principal"), c.req.valid("param").id)), 200);
};
