import { createApp } from "./app";
import type { RunMessage } from "./domain/reports/runs";
import type { WebhookMessage } from "./domain/webhooks/dispatch";
import { runScheduledJobs } from "./jobs";
import { ApiError, errorBody } from "./platform/errors";
import { newId } from "./platform/ids";
import { logError } from "./platform/logger";
import { queueKind } from "./queues/kinds";
import { consumeReportRuns } from "./queues/report-runs";
import { consumeUsage, routeUsage } from "./queues/usage";
import { consumeWebhooks } from "./queues/webhooks";

export {
  ApiKeyGuard,
  GatewayHub,
  RequestTail,
  SubuserGate,
  TrafficStore,
  UsageBatchLedger,
} from "./durable-objects";

const app = createApp();

export default {
  async fetch(request, env, ctx) {
    try {
      return await app.fetch(request, env, ctx);
    } catch (error) {
      // Hono hands only Error instances to the app's error handler; this catches any other throw.
      const requestId = newId("request");
      logError("unhandled_throw", { request_id: requestId }, error);
      return Response.json(errorBody(new ApiError("internal_error"), requestId, new URL(request.url).origin), {
        status: 500,
        headers: { "X-Request-Id": requestId },
      });
    }
  },

  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduledJobs(env, controller.scheduledTime));
  },

  async queue(batch, env) {
    const kind = queueKind(batch.queue);
    if (kind === "usage") return routeUsage(batch, env);
    if (kind === "usage-accounts") return consumeUsage(batch, env);
    if (kind === "webhooks") return consumeWebhooks(batch as MessageBatch<WebhookMessage>, env);
    if (kind === "report-runs") return consumeReportRuns(batch as MessageBatch<RunMessage>, env);
    // A queue this worker does not know (a binding renamed in one place only): keep its messages for a fix.
    logError("unknown_queue", { queue: batch.queue, messages: batch.messages.length }, new Error("no consumer"));
    batch.retryAll();
  },
} satisfies ExportedHandler<Cloudflare.Env>;
