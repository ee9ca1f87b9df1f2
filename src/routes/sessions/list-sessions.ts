import { type RouteHandler, z } from "@hono/zod-openapi";
import { listSessions } from "../../domain/traffic/sessions";
import type { AppEnv } from "../../env";
import { idParam, queryInteger, token } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSession, sessionSchema } from "../../resources/session";
import { SESSION_PRODUCTS } from "./products";

const query = paginationQuery.extend({
  subuser: idParam("subuser").optional(),
  session_id: token(/^[a-z0-9]{1,32}$/, 32).optional(),
  region: token(/^[A-Za-z]{2}$/, 2, "must be an ISO 3166-1 alpha-2 code")
    .transform((code) => code.toLowerCase())
    .optional(),
  asn: queryInteger(0, 4_294_967_295).optional(),
  repinned: z.enum(["true", "false"]).optional(),
});

/** `GET /residential/sessions` and `GET /mobile/sessions`. */
export const operations = SESSION_PRODUCTS.map(({ product, name }) => {
  const route = apiRoute({
    operationId: `list${name}Sessions`,
    method: "get",
    path: `/${product}/sessions`,
    tags: ["Sessions"],
    boundKeys: true,
    summary: `List ${product} sticky sessions`,
    description:
      "The account's sticky sessions of all its sub-users, newest first: live ones, and terminated ones for 24 " +
      "hours. Expired sessions are gone. A session is listed once its first request's usage counts: within 60 " +
      "seconds of the gateway reporting it; its `bytes_used`, `requests` and exit follow its usage the same way.",
    request: { query },
    paginated: true,
    errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
    responses: { 200: jsonContent(pageSchema(sessionSchema), "A page of sessions.") },
  });
  const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
    const { subuser, session_id, repinned, ...page } = c.req.valid("query");
    const rows = await listSessions(c.get("ctx"), c.get("principal"), product, {
      ...page,
      subuserId: subuser,
      sessionId: session_id,
      repinned: repinned === undefined ? undefined : repinned === "true",
    });
    return c.json(toPage(c, rows, page.limit, presentSession), 200);
  };
  return { route, handler };
});
