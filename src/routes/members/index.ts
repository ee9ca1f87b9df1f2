import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createInvitation from "./create-invitation";
import * as deleteMember from "./delete-member";
import * as getMember from "./get-member";
import * as listInvitations from "./list-invitations";
import * as listMembers from "./list-members";
import * as revokeInvitation from "./revoke-invitation";
import * as updateMember from "./update-member";

export function memberRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listMembers.route, listMembers.handler);
  app.openapi(getMember.route, getMember.handler);
  app.openapi(updateMember.route, updateMember.handler);
  app.openapi(deleteMember.route, deleteMember.handler);
  app.openapi(listInvitations.route, listInvitations.handler);
  app.openapi(createInvitation.route, createInvitation.handler);
  app.openapi(revokeInvitation.route, revokeInvitation.handler);
}
