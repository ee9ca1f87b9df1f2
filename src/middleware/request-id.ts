import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { now } from "../platform/clock";
import { newId } from "../platform/ids";
import { logInfo } from "../platform/logger";

/**
 * Gives every request a `req_…` id, puts it on the response as `X-Request-Id`,
 * and writes one structured log line when the response is ready.
 */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const startedAt = now();
  const id = newId("request");
  c.set("requestId", id);
  c.set("replayed", false);
  await next();
  // A replayed idempotent response keeps the id its body was written with.
  if (!c.get("replayed")) c.res.headers.set("X-Request-Id", id);
  if (String(c.env.LOG_REQUESTS) !== "false") {
    logInfo("request", {
      request_id: id,
      account_id: c.get("principal")?.accountId,
      key_id: c.get("principal")?.keyId,
      method: c.req.method,
      route: c.req.routePath,
      status: c.res.status,
      duration_ms: now() - startedAt,
      idempotent_replay: c.get("replayed") || undefined,
    });
  }
});
