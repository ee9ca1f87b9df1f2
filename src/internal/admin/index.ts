import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { internalAuth } from "../../middleware/internal-auth";
import { jsonBody } from "../../middleware/json-body";
import { validationHook } from "../../platform/validation";
import { adminAccountRoutes } from "./accounts";
import { adminApiKeyRoutes } from "./api-keys";
import { adminPriceRoutes } from "./prices";

/** The operators' and dashboard's API, behind ADMIN_TOKEN. */
export function adminApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", internalAuth("ADMIN_TOKEN"), jsonBody);
  adminAccountRoutes(app);
  adminApiKeyRoutes(app);
  adminPriceRoutes(app);
  return app;
}
