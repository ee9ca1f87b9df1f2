import type { RouteHandler } from "@hono/zod-openapi";
import { listNodeCredentials } from "../../domain/gateway/node-credentials";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { gatewayNodeCredentialSchema, nodeId, presentGatewayNodeCredential } from "../../resources/gateway-node";
import { tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminListGatewayNodeCredentials",
    method: "get",
    path: "/gateway-nodes",
    tags,
    summary: "List gateway nodes' credentials",
    description: "Newest first, revoked ones included; never their tokens. `node` lists one node's alone.",
    request: {
      query: paginationQuery.extend({ node: nodeId().optional().openapi({ description: "One node's alone." }) }),
    },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(pageSchema(gatewayNodeCredentialSchema), "A page of credentials, newest first.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listNodeCredentials(c.get("ctx"), query);
  return c.json(toPage(c, rows, query.limit, presentGatewayNodeCredential), 200);
};
