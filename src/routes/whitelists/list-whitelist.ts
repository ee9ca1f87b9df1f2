import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { listSubuserWhitelist } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { presentWhitelistEntry, whitelistEntrySchema } from "../../schemas/whitelist";

const query = paginationQuery.extend({
  subuser: z.string().min(1).openapi({ description: "The sub-user's id.", example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
});

export const route = apiRoute({
  method: "get",
  path: "/whitelists",
  tags: ["Whitelists"],
  summary: "List a sub-user's whitelist",
  request: { query },
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(whitelistEntrySchema), "A page of entries, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const filters = c.req.valid("query");
  const rows = await listSubuserWhitelist(domainContext(c.env), c.var.principal, filters);
  return c.json(toPage(c, rows, filters.limit, presentWhitelistEntry), 200);
};
