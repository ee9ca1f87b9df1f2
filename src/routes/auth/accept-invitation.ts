import { type RouteHandler, z } from "@hono/zod-openapi";
import { acceptInvitation } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { clientAddress } from "../../middleware/client-address";
import { text } from "../../platform/fields";
import { jsonBody, jsonContent, publicRoute } from "../../platform/route-definitions";
import { linkTokenSchema, memberSchema, passwordSchema, presentMember } from "../../resources/member";

const body = z
  .strictObject({ token: linkTokenSchema, name: text(100, 1), password: passwordSchema })
  .openapi("InvitationAcceptance", {
    example: {
      token: "3kT9xZq0pW7mL2nB8vC4dF6gH1jK5sA0eR3tY7uI9oP",
      name: "Dana Developer",
      password: "correct horse battery staple",
    },
  });

export const route = publicRoute({
  operationId: "acceptInvitation",
  method: "post",
  path: "/invitations/accept",
  tags: ["Sign-in"],
  summary: "Accept an invitation",
  description:
    "The invited person chooses a name and a password and becomes a member with the invited role; then signs in " +
    "with `POST /auth/sign-in`. The link works once, for 24 hours: used, revoked, expired or unknown is 410 " +
    "`link_expired`.",
  request: { body: jsonBody(body) },
  errors: ["link_expired", "member_exists"],
  responses: { 201: jsonContent(memberSchema, "The new member.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const member = await acceptInvitation(c.get("ctx"), c.req.valid("json"), {
    ip: clientAddress(c),
    requestId: c.get("requestId"),
  });
  return c.json(presentMember(member), 201);
};
