import { type RouteHandler, z } from "@hono/zod-openapi";
import { removeSubuserWhitelistEntry } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";

export const route = apiRoute({
  operationId: "deleteWhitelistEntry",
  method: "delete",
  path: "/whitelists/{id}",
  tags: ["Whitelists"],
  boundKeys: true,
  summary: "Remove a whitelist entry",
  description: "Effective on the gateway's next decision (decisions are cached at most 30 s, within the spec's 60 s).",
  request: { params: z.object({ id: idParam("whitelist").openapi({ param: { name: "id", in: "path" } }) }) },
  errors: ["not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(deletedSchema, "Removed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const entry = await removeSubuserWhitelistEntry(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json({ id: entry.id, deleted: true as const }, 200);
};
