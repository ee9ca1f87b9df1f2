import type { RouteHandler } from "@hono/zod-openapi";
import { revokeInvitation } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { invitationIdParam, invitationSchema, presentInvitation } from "../../resources/member";

export const route = apiRoute({
  operationId: "revokeInvitation",
  method: "delete",
  path: "/invitations/{id}",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "Revoke an invitation",
  description: "Its link stops working at once. An invitation no longer pending is answered as it is.",
  request: { params: invitationIdParam },
  errors: ["invitation_not_found"],
  responses: { 200: jsonContent(invitationSchema, "The invitation.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const row = await revokeInvitation(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentInvitation(row), 200);
};
