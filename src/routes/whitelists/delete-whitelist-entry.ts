import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { removeSubuserWhitelistEntry } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { deletedSchema } from "../../schemas/common";

export const route = apiRoute({
  method: "delete",
  path: "/whitelists/{id}",
  tags: ["Whitelists"],
  summary: "Remove a whitelist entry",
  description: "Effective on the gateway's next decision (decisions are cached at most 30 s, within the spec's 60 s).",
  request: { params: z.object({ id: z.string().openapi({ example: "wl_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }) }) },
  errors: ["not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const entry = await removeSubuserWhitelistEntry(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json({ id: entry.id, deleted: true as const }, 200);
};
