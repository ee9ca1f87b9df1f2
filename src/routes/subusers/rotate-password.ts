import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { rotateSubuserPassword } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { subuserIdParam } from "../../schemas/subuser";

const rotated = z
  .object({
    id: z.string(),
    name: z.string(),
    password: z.string().openapi({ description: "The new password; shown once." }),
    previous_password_expires_at: z.iso
      .datetime()
      .openapi({ description: "The old password works until then (60 s)." }),
  })
  .openapi("RotatedPassword");

export const route = apiRoute({
  method: "post",
  path: "/subusers/{id}/rotate-password",
  tags: ["Sub-users"],
  summary: "Rotate a sub-user's password",
  description: "Returns a new password once. The old password keeps working for 60 seconds, then gets 407.",
  request: { params: subuserIdParam },
  errors: ["subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(rotated, "The new password.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { subuser, password } = await rotateSubuserPassword(
    domainContext(c.env),
    c.var.principal,
    c.req.valid("param").id,
  );
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
