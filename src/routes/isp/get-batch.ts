import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { findBatch } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { batchIdParam, batchSchema, presentBatch } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/isp/batches/{id}",
  tags: ["ISP"],
  summary: "Get an ISP batch",
  request: { params: batchIdParam },
  errors: ["not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(batchSchema, "The batch.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentBatch(await findBatch(domainContext(c.env), c.var.principal, c.req.valid("param").id)), 200);
};
