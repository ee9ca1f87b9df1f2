import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as disableMfa from "./disable-mfa";
import * as enrollMfa from "./enroll-mfa";
import * as getMe from "./get-me";
import * as getSecurity from "./get-security";
import * as updateMe from "./update-me";
import * as verifyMfa from "./verify-mfa";

export function usersRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getMe.route, getMe.handler);
  app.openapi(updateMe.route, updateMe.handler);
  app.openapi(getSecurity.route, getSecurity.handler);
  app.openapi(enrollMfa.route, enrollMfa.handler);
  app.openapi(verifyMfa.route, verifyMfa.handler);
  app.openapi(disableMfa.route, disableMfa.handler);
}
