import type { RouteHandler } from "@hono/zod-openapi";
import { removeBatchWhitelistEntry } from "../../domain/whitelists/batch-whitelists";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { batchIdParam } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "removeIspBatchWhitelistEntry",
  method: "delete",
  path: "/isp/batches/{id}/whitelist/{entry_id}",
  tags: ["ISP"],
  summary: "Remove a batch whitelist entry",
  description: "Effective on the gateway's next decision.",
  request: { params: batchIdParam.extend({ entry_id: idParam("whitelist") }) },
  errors: ["not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id, entry_id } = c.req.valid("param");
  const entry = await removeBatchWhitelistEntry(c.get("ctx"), c.get("principal"), id, entry_id);
  return c.json({ id: entry.id, deleted: true as const }, 200);
};
