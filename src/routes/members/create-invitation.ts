import { type RouteHandler, z } from "@hono/zod-openapi";
import { createInvitation } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { email } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { invitationSchema, memberRoleSchema, presentInvitation } from "../../resources/member";

const body = z
  .strictObject({ email: email(), role: memberRoleSchema })
  .openapi("InvitationRequest", { example: { email: "dev@acme.example", role: "developer" } });

export const route = apiRoute({
  operationId: "createInvitation",
  method: "post",
  path: "/invitations",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "Invite a person",
  description:
    "Mails the address a link to join the account with this role: it works once, for 24 hours, and asks for a " +
    "name and a password (`POST /invitations/accept`). The link's token is mailed only, stored hashed. The role " +
    "is within the caller's own (403 `insufficient_scope`); an address that is a member already, or has a pending " +
    "invitation, is 409 `member_exists`. A mail that cannot be sent withdraws the invitation: 502 `mail_failed`.",
  request: { body: jsonBody(body) },
  errors: ["member_exists", "mail_failed"],
  responses: { 201: jsonContent(invitationSchema, "The pending invitation.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const row = await createInvitation(c.get("ctx"), c.get("principal"), c.req.valid("json"));
  return c.json(presentInvitation(row), 201);
};
