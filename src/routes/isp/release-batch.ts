import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { releaseBatch } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { requireMfa } from "../../middleware/gates";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { batchIdParam, batchSchema, presentBatch } from "../../schemas/commerce";

export const route = apiRoute({
  method: "delete",
  path: "/isp/batches/{id}",
  tags: ["ISP"],
  summary: "Release a batch",
  description: "Releases every IP at once; no refund. Needs `X-MFA-Code` when MFA is enabled.",
  request: { params: batchIdParam },
  errors: ["not_found", "subuser_scope_mismatch", "mfa_required", "batch_not_active", "batch_changed"],
  responses: { 200: jsonContent(batchSchema, "The released batch.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const ctx = domainContext(c.env);
  await requireMfa(c, await currentAccount(c));
  return c.json(presentBatch(await releaseBatch(ctx, c.var.principal, c.req.valid("param").id)), 200);
};
