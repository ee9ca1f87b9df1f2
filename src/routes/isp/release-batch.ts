import type { RouteHandler } from "@hono/zod-openapi";
import { releaseBatch } from "../../domain/isp/batch-actions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { batchIdParam, batchSchema, presentBatch } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "releaseIspBatch",
  method: "delete",
  path: "/isp/batches/{id}",
  tags: ["ISP"],
  summary: "Release a batch",
  description: "Releases every IP at once; no refund. Needs `X-MFA-Code` when MFA is enabled.",
  request: { params: batchIdParam },
  mfa: true,
  errors: ["not_found", "subuser_scope_mismatch", "batch_not_active", "batch_changed"],
  responses: { 200: jsonContent(batchSchema, "The released batch.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const batch = await releaseBatch(c.get("ctx"), c.get("principal"), c.req.valid("param").id, mfaCode(c));
  return c.json(presentBatch(batch), 200);
};
