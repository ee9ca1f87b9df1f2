import { type RouteHandler, z } from "@hono/zod-openapi";
import { terminateSession } from "../../domain/traffic/sessions";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSession, sessionSchema } from "../../resources/session";
import { SESSION_PRODUCTS } from "./products";

const params = z.object({ id: idParam("session").openapi({ param: { name: "id", in: "path" } }) });

/** `DELETE /residential/sessions/{id}` and `DELETE /mobile/sessions/{id}`. */
export const operations = SESSION_PRODUCTS.map(({ product, name }) => {
  const route = apiRoute({
    operationId: `terminate${name}Session`,
    method: "delete",
    path: `/${product}/sessions/{id}`,
    tags: ["Sessions"],
    boundKeys: true,
    summary: `Terminate a ${product} sticky session`,
    description:
      "Ends the session now: its status becomes `terminated` (the record is kept 24 hours) and the next request " +
      "with its username starts a new session with a new exit IP.",
    request: { params },
    errors: ["session_not_found", "subuser_scope_mismatch"],
    responses: { 200: jsonContent(sessionSchema, "The terminated session.") },
  });
  const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
    const session = await terminateSession(c.get("ctx"), c.get("principal"), product, c.req.valid("param").id);
    return c.json(presentSession(session), 200);
  };
  return { route, handler };
});
