import { type RouteHandler, z } from "@hono/zod-openapi";
import { rotateSubuserPassword } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { id, timestamp, token } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { passwordSchema, subuserIdParam } from "../../resources/subuser";

const rotated = z
  .object({
    id: id("subuser"),
    name: token(/^[a-z0-9]{1,32}$/, 32),
    password: passwordSchema.openapi({ description: "The new password; shown once." }),
    previous_password_expires_at: timestamp().openapi({ description: "The old password works until then (60 s)." }),
  })
  .openapi("RotatedPassword");

export const route = apiRoute({
  operationId: "rotateSubuserPassword",
  method: "post",
  path: "/subusers/{id}/rotate-password",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "Rotate a sub-user's password",
  description: "Returns a new password once. The old password keeps working for 60 seconds, then gets 407.",
  request: { params: subuserIdParam },
  secret: true,
  errors: ["subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(rotated, "The new password.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { subuser, password } = await rotateSubuserPassword(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(
    {
      id: subuser.id,
      name: subuser.name,
      password,
      previous_password_expires_at: toIso(subuser.previousPasswordUntil as number),
    },
    200,
  );
};
