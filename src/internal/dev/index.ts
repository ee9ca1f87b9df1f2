import { z } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { internalAuth } from "../../middleware/internal-auth";
import { jsonBody } from "../../middleware/json-body";
import { ApiError } from "../../platform/errors";
import { armFault, faultCounts, faultKinds } from "../../platform/faults";
import { validate } from "../../platform/validation";

const armSchema = z.strictObject({ kind: z.enum(faultKinds), count: z.number().int().min(1).max(1000) });

/**
 * Local development's fault injection (`npm run soak`), behind ADMIN_TOKEN: `POST /faults {kind, count}` arms
 * faults, `GET /faults` counts those armed and fired (src/platform/faults.ts). It exists only where the worker's var
 * `FAULTS` is `"on"`: anywhere else every path under it is a 404, as if it were not there. Not part of the internal
 * OpenAPI document, which describes what production serves.
 */
export function devApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    if ((c.env as { FAULTS?: string }).FAULTS !== "on") {
      throw new ApiError("not_found", `No route matches ${c.req.method} ${c.req.path}.`);
    }
    await next();
  });
  app.use("*", internalAuth("ADMIN_TOKEN"), jsonBody);
  app.get("/faults", (c) => c.json({ faults: faultCounts() }, 200));
  app.post("/faults", async (c) => {
    const { kind, count } = validate(armSchema, await c.req.json(), "json");
    armFault(kind, count);
    return c.json({ faults: faultCounts() }, 200);
  });
  return app;
}
