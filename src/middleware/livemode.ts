import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { isPlainObject } from "../platform/json";

/**
 * Stripe's `livemode`: every JSON object a `/v1` operation answers with (2xx) carries `livemode` — false in the
 * sandbox (`test_` keys), true otherwise — declared once for every operation by `apiRoute`. Added where bodies are
 * serialized (`c.json`), so no handler or resource builder repeats it; errors keep the spec's exact shape.
 */
export const livemodeField = createMiddleware<AppEnv>(async (c, next) => {
  const livemode = c.get("livemode");
  const json = c.json;
  c.json = ((object: unknown, init?: number | ResponseInit, headers?: HeadersInit) =>
    json(
      isSuccess(init) && isPlainObject(object) ? { ...object, livemode } : object,
      init as 200,
      headers as Record<string, string>,
    )) as typeof c.json;
  await next();
});

function isSuccess(init: number | ResponseInit | undefined): boolean {
  const status = typeof init === "number" ? init : (init?.status ?? 200);
  return status < 300;
}
