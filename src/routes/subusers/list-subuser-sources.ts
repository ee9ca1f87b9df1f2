import type { RouteHandler } from "@hono/zod-openapi";
import { listClientSources } from "../../domain/subusers/client-sources";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { clientSourceSchema, presentClientSource, subuserIdParam } from "../../resources/subuser";

export const route = apiRoute({
  operationId: "listSubuserSources",
  method: "get",
  path: "/subusers/{id}/sources",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "List a sub-user's client sources",
  description:
    "The client addresses the sub-user's traffic came from (the address that connected to the gateway), grouped " +
    "into blocks — IPv4 /24, IPv6 /64 — seen in the last 30 days, newest first seen first, with when each was " +
    "first and last seen and its requests and bytes (in + out). Up to 1,000 blocks per sub-user are kept (the " +
    "least recently seen go first). Usage reported without `client_ip` is not listed here. Within seconds of the " +
    "usage, like traffic.",
  request: { params: subuserIdParam, query: paginationQuery },
  paginated: true,
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(clientSourceSchema), "A page of client blocks.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const page = c.req.valid("query");
  const rows = await listClientSources(c.get("ctx"), c.get("principal"), c.req.valid("param").id, page);
  return c.json(toPage(c, rows, page.limit, presentClientSource), 200);
};
