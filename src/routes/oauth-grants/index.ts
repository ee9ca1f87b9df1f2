import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as listOAuthGrants from "./list-oauth-grants";
import * as revokeOAuthGrant from "./revoke-oauth-grant";

export function oauthGrantRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listOAuthGrants.route, listOAuthGrants.handler);
  app.openapi(revokeOAuthGrant.route, revokeOAuthGrant.handler);
}
