import { OpenAPIHono } from "@hono/zod-openapi";
import { documentOf, internalApi } from "../api-docs/document";
import type { AppEnv } from "../env";
import { validationHook } from "../platform/validation";
import { adminApp } from "./admin";
import { devApp } from "./dev";
import { gatewayApp } from "./gateway";

/**
 * The internal contracts, mounted at `/internal`: the admin API and the gateway contract; and local development's
 * fault injection, which only a worker with `FAULTS` on serves (left out of the document).
 */
export function internalRouter() {
  const internal = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  internal.route("/admin", adminApp());
  internal.route("/gateway", gatewayApp());
  internal.route("/dev", devApp());
  return { router: internal, document: documentOf(internal, internalApi) };
}
