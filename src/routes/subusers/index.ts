import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createSubuser from "./create-subuser";
import * as deleteSubuser from "./delete-subuser";
import * as getSubuser from "./get-subuser";
import * as getSubuserProxyList from "./get-subuser-proxy-list";
import * as listSubuserSources from "./list-subuser-sources";
import * as listSubusers from "./list-subusers";
import * as rotateSubuserPassword from "./rotate-subuser-password";
import * as updateSubuser from "./update-subuser";

export function subuserRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listSubusers.route, listSubusers.handler);
  app.openapi(createSubuser.route, createSubuser.handler);
  app.openapi(getSubuser.route, getSubuser.handler);
  app.openapi(updateSubuser.route, updateSubuser.handler);
  app.openapi(rotateSubuserPassword.route, rotateSubuserPassword.handler);
  app.openapi(deleteSubuser.route, deleteSubuser.handler);
  app.openapi(listSubuserSources.route, listSubuserSources.handler);
  app.openapi(getSubuserProxyList.route, getSubuserProxyList.handler);
}
