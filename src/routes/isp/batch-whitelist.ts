import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import {
  listBatchWhitelist,
  removeBatchWhitelistEntry,
  whitelistBatchIp,
} from "../../domain/whitelists/batch-whitelists";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { batchIdParam } from "../../schemas/commerce";
import { deletedSchema } from "../../schemas/common";
import {
  batchWhitelistEntrySchema,
  presentBatchWhitelistEntry,
  whitelistIpSchema,
  whitelistLabelSchema,
} from "../../schemas/whitelist";

// The three operations of a batch's whitelist share their parameters and errors.
const scopeErrors = ["not_found", "subuser_scope_mismatch"] as const;

export const listRoute = apiRoute({
  method: "get",
  path: "/isp/batches/{id}/whitelist",
  tags: ["ISP"],
  summary: "List a batch's whitelist",
  request: { params: batchIdParam, query: paginationQuery },
  errors: ["invalid_request", ...scopeErrors],
  responses: { 200: jsonContent(pageSchema(batchWhitelistEntrySchema), "A page of entries.") },
});

export const list: RouteHandler<typeof listRoute, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listBatchWhitelist(domainContext(c.env), c.var.principal, c.req.valid("param").id, query);
  return c.json(toPage(c, rows, query.limit, presentBatchWhitelistEntry), 200);
};

export const addRoute = apiRoute({
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
  errors: [...scopeErrors, "invalid_cidr", "over_limit", "already_whitelisted", "batch_not_active"],
  responses: { 201: jsonContent(batchWhitelistEntrySchema, "The new entry.") },
});

export const add: RouteHandler<typeof addRoute, AppEnv> = async (c) => {
  const entry = await whitelistBatchIp(
    domainContext(c.env),
    c.var.principal,
    c.req.valid("param").id,
    c.req.valid("json"),
  );
  return c.json(presentBatchWhitelistEntry(entry), 201);
};

export const removeRoute = apiRoute({
  method: "delete",
  path: "/isp/batches/{id}/whitelist/{entry_id}",
  tags: ["ISP"],
  summary: "Remove a batch whitelist entry",
  request: {
    params: batchIdParam.extend({ entry_id: z.string().openapi({ example: "wl_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }) }),
  },
  errors: [...scopeErrors],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const remove: RouteHandler<typeof removeRoute, AppEnv> = async (c) => {
  const { id, entry_id } = c.req.valid("param");
  const entry = await removeBatchWhitelistEntry(domainContext(c.env), c.var.principal, id, entry_id);
  return c.json({ id: entry.id, deleted: true as const }, 200);
};
