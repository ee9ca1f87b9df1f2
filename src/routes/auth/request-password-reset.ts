import { type RouteHandler, z } from "@hono/zod-openapi";
import { requestPasswordReset } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { email, id } from "../../platform/fields";
import { jsonBody, jsonContent, publicRoute } from "../../platform/route-definitions";

const body = z
  .strictObject({
    email: email(),
    account: id("account").optional().openapi({ description: "Only the member of this account." }),
  })
  .openapi("PasswordResetRequest", { example: { email: "ops@acme.example" } });

export const route = publicRoute({
  operationId: "requestPasswordReset",
  method: "post",
  path: "/auth/password-reset",
  tags: ["Sign-in"],
  summary: "Ask for a password reset",
  description:
    "Mails each member with this address a link to choose a new password (it works once, for 1 hour). The answer " +
    "is the same whether or not the address belongs to a member. At most 3 a minute and 20 a day per address " +
    "(429 with `Retry-After`).",
  request: { body: jsonBody(body) },
  responses: { 202: jsonContent(z.object({ accepted: z.literal(true) }), "Asked: a link is mailed if it can be.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await requestPasswordReset(c.get("ctx"), c.req.valid("json"));
  return c.json({ accepted: true as const }, 202);
};
