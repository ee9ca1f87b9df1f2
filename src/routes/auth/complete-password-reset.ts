import { type RouteHandler, z } from "@hono/zod-openapi";
import { completePasswordReset } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { clientAddress } from "../../middleware/client-address";
import { jsonBody, jsonContent, publicRoute } from "../../platform/route-definitions";
import { linkTokenSchema, passwordSchema } from "../../resources/member";

const body = z.strictObject({ token: linkTokenSchema, password: passwordSchema }).openapi("PasswordReset", {
  example: { token: "3kT9xZq0pW7mL2nB8vC4dF6gH1jK5sA0eR3tY7uI9oP", password: "a new correct horse battery" },
});

export const route = publicRoute({
  operationId: "completePasswordReset",
  method: "post",
  path: "/auth/password-reset/complete",
  tags: ["Sign-in"],
  summary: "Set a new password with a reset link",
  description:
    "The member's password becomes the new one, every session of theirs ends and their other reset links stop " +
    "working. A link works once, for 1 hour: used, expired or unknown is 410 `link_expired`.",
  request: { body: jsonBody(body) },
  errors: ["link_expired"],
  responses: { 200: jsonContent(z.object({ reset: z.literal(true) }), "The password is changed.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await completePasswordReset(c.get("ctx"), c.req.valid("json"), {
    ip: clientAddress(c),
    requestId: c.get("requestId"),
  });
  return c.json({ reset: true as const }, 200);
};
