import { createMiddleware } from "hono/factory";
import { dispatchWebhooks } from "../domain/webhooks/dispatch";
import type { AppEnv } from "../env";
import { now } from "../platform/clock";
import { logError } from "../platform/logger";

/**
 * The prompt path of webhook delivery: after a successful write that recorded an event (e.g. a bandwidth order's
 * `order.completed`) that an endpoint awaits, the account's undispatched events are fanned out and handed to the queue once the response
 * has left; other writes cost nothing here. Events recorded elsewhere (cron, queues) leave with the every-minute cron.
 */
export const dispatchWebhooksAfterWrites = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method === "GET" || c.res.status >= 400 || c.get("replayed") || !c.get("principal")) return;
  if (!c.get("ctx").awaitedEvents) return;
  const { accountId } = c.get("principal");
  const work = dispatchWebhooks(c.get("ctx"), now(), accountId).catch((error) =>
    logError("webhook_dispatch_failed", { account: accountId }, error),
  );
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // No execution context (a direct app.request call): the work runs unawaited; the cron is the safety net.
  }
});
