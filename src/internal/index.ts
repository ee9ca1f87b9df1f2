import { OpenAPIHono } from "@hono/zod-openapi";
import { documentOf, internalApi } from "../api-docs/document";
import type { AppEnv } from "../env";
import { validationHook } from "../platform/validation";
import { adminApp } from "./admin";
import { gatewayApp } from "./gateway";

/** The internal contracts, mounted at `/internal`: the admin API and the gateway contract. */
export function internalRouter() {
  const internal = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  internal.route("/admin", adminApp());
  internal.route("/gateway", gatewayApp());
  return { router: internal, document: documentOf(internal, internalApi) };
}
