import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createApiKey from "./create-api-key";
import * as deleteApiKey from "./delete-api-key";
import * as getApiKey from "./get-api-key";
import * as getCurrentApiKey from "./get-current-api-key";
import * as listApiKeys from "./list-api-keys";
import * as rotateApiKey from "./rotate-api-key";
import * as updateApiKey from "./update-api-key";

export function apiKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listApiKeys.route, listApiKeys.handler);
  app.openapi(createApiKey.route, createApiKey.handler);
  // Before /api-keys/{id}, which would take `current` for an id.
  app.openapi(getCurrentApiKey.route, getCurrentApiKey.handler);
  app.openapi(getApiKey.route, getApiKey.handler);
  app.openapi(updateApiKey.route, updateApiKey.handler);
  app.openapi(deleteApiKey.route, deleteApiKey.handler);
  app.openapi(rotateApiKey.route, rotateApiKey.handler);
}
