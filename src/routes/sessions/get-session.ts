import { type RouteHandler, z } from "@hono/zod-openapi";
import { findSession } from "../../domain/traffic/sessions";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSessionWithRequests, sessionWithRequestsSchema } from "../../resources/session";
import { SESSION_PRODUCTS } from "./products";

const params = z.object({ id: idParam("session").openapi({ param: { name: "id", in: "path" } }) });

/** `GET /residential/sessions/{id}` and `GET /mobile/sessions/{id}`. */
export const operations = SESSION_PRODUCTS.map(({ product, name }) => {
  const route = apiRoute({
    operationId: `get${name}Session`,
    method: "get",
    path: `/${product}/sessions/{id}`,
    tags: ["Sessions"],
    boundKeys: true,
    summary: `Get a ${product} sticky session`,
    description:
      "The session with its last 10 requests. After `expires_at` it is 404 `session_not_found`; a terminated one " +
      "stays 24 hours.",
    request: { params },
    errors: ["invalid_request", "session_not_found", "subuser_scope_mismatch"],
    responses: { 200: jsonContent(sessionWithRequestsSchema, "The session.") },
  });
  const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
    const found = await findSession(c.get("ctx"), c.get("principal"), product, c.req.valid("param").id);
    return c.json(presentSessionWithRequests(found), 200);
  };
  return { route, handler };
});
