import { type RouteHandler, z } from "@hono/zod-openapi";
import { changePassword } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { text } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { passwordSchema } from "../../resources/member";

const body = z
  .strictObject({ current_password: text(200, 1), new_password: passwordSchema })
  .openapi("PasswordChange", {
    example: { current_password: "correct horse battery staple", new_password: "a new correct horse battery" },
  });

export const route = apiRoute({
  operationId: "changePassword",
  method: "post",
  path: "/auth/password",
  tags: ["Sign-in"],
  session: true,
  summary: "Change my password",
  description:
    "Needs the current password (else 401 `invalid_credentials`; throttled like a sign-in). Every other session of " +
    "the member ends; this one stays.",
  request: { body: jsonBody(body) },
  errors: ["invalid_credentials"],
  responses: { 200: jsonContent(z.object({ changed: z.literal(true) }), "The password is changed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { current_password, new_password } = c.req.valid("json");
  await changePassword(c.get("ctx"), c.get("principal"), {
    currentPassword: current_password,
    newPassword: new_password,
  });
  return c.json({ changed: true as const }, 200);
};
