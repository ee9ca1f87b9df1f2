import type { RouteHandler } from "@hono/zod-openapi";
import { listPasskeys } from "../../domain/members/passkeys";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { passkeySchema, presentPasskey } from "../../resources/passkey";

export const route = apiRoute({
  operationId: "listPasskeys",
  method: "get",
  path: "/auth/passkeys",
  tags: ["Sign-in"],
  session: true,
  summary: "List my passkeys",
  description: "The signed-in member's passkeys (at most 10), newest first.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(passkeySchema), "A page of passkeys.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listPasskeys(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentPasskey), 200);
};
