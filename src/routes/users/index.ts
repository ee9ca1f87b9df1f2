import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as disableMfa from "./disable-mfa";
import * as enrollMfa from "./enroll-mfa";
import * as getAccount from "./get-account";
import * as getSecurityInfo from "./get-security-info";
import * as updateAccount from "./update-account";
import * as verifyMfa from "./verify-mfa";

export function usersRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getAccount.route, getAccount.handler);
  app.openapi(updateAccount.route, updateAccount.handler);
  app.openapi(getSecurityInfo.route, getSecurityInfo.handler);
  app.openapi(enrollMfa.route, enrollMfa.handler);
  app.openapi(verifyMfa.route, verifyMfa.handler);
  app.openapi(disableMfa.route, disableMfa.handler);
}
