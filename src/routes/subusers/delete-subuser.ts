import type { RouteHandler } from "@hono/zod-openapi";
import { deleteSubuser } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { subuserIdParam } from "../../resources/subuser";

export const route = apiRoute({
  operationId: "deleteSubuser",
  method: "delete",
  path: "/subusers/{id}",
  tags: ["Sub-users"],
  summary: "Delete a sub-user",
  description:
    "Irreversible. New gateway requests get 407 at once; requests in flight may take up to 60 seconds to drain. " +
    "The generated name is never reused.",
  request: { params: subuserIdParam },
  errors: ["subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(deletedSchema, "Deleted.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subuser = await deleteSubuser(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json({ id: subuser.id, deleted: true as const }, 200);
};
