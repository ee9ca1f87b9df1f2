import type { RouteHandler } from "@hono/zod-openapi";
import { listSubuserWhitelist } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentWhitelistEntry, whitelistEntrySchema } from "../../resources/whitelist";

const query = paginationQuery.extend({ subuser: idParam("subuser").openapi({ description: "The sub-user's id." }) });

export const route = apiRoute({
  operationId: "listWhitelistEntries",
  method: "get",
  path: "/whitelists",
  tags: ["Whitelists"],
  boundKeys: true,
  summary: "List a sub-user's whitelist",
  description: "Every product's entries of one sub-user, newest first.",
  request: { query },
  paginated: true,
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(whitelistEntrySchema), "A page of entries, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { subuser, ...page } = c.req.valid("query");
  const rows = await listSubuserWhitelist(c.get("ctx"), c.get("principal"), { ...page, subuserId: subuser });
  return c.json(toPage(c, rows, page.limit, presentWhitelistEntry), 200);
};
