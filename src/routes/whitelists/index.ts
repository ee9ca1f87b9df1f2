import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createEntry from "./create-whitelist-entry";
import * as deleteEntry from "./delete-whitelist-entry";
import * as listEntries from "./list-whitelist-entries";

export function whitelistRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listEntries.route, listEntries.handler);
  app.openapi(createEntry.route, createEntry.handler);
  app.openapi(deleteEntry.route, deleteEntry.handler);
}
