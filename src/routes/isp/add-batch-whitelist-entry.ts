import { type RouteHandler, z } from "@hono/zod-openapi";
import { whitelistBatchIp } from "../../domain/whitelists/batch-whitelists";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { batchIdParam } from "../../resources/isp-batch";
import {
  batchWhitelistEntrySchema,
  presentBatchWhitelistEntry,
  whitelistIpSchema,
  whitelistLabelSchema,
} from "../../resources/whitelist";

export const route = apiRoute({
  operationId: "addIspBatchWhitelistEntry",
  method: "post",
  path: "/isp/batches/{id}/whitelist",
  tags: ["ISP"],
  summary: "Whitelist a source IP for a batch",
  description:
    "Applies to every IP of the batch. Same rules as sub-user whitelists: at most 50 entries, /24 and /64 at most.",
  request: {
    params: batchIdParam,
    body: jsonBody(
      z
        .strictObject({ ip: whitelistIpSchema, label: whitelistLabelSchema })
        .openapi("BatchWhitelistEntryCreate", { example: { ip: "203.0.113.0/24", label: "office" } }),
    ),
  },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "invalid_cidr",
    "over_limit",
    "already_whitelisted",
    "batch_not_active",
  ],
  responses: { 201: jsonContent(batchWhitelistEntrySchema, "The new entry.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const entry = await whitelistBatchIp(c.get("ctx"), c.get("principal"), c.req.valid("param").id, c.req.valid("json"));
  return c.json(presentBatchWhitelistEntry(entry), 201);
};
