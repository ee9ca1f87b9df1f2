import { type RouteHandler, z } from "@hono/zod-openapi";
import { ingestUsageBatch } from "../../domain/traffic/ingest";
import { usageBatchSchema } from "../../domain/traffic/usage-records";
import type { AppEnv } from "../../env";
import { integer } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";

export const route = internalRoute(
  {
    operationId: "reportUsage",
    method: "post",
    path: "/usage",
    tags: ["Gateway"],
    summary: "Report usage",
    description:
      "A batch of 1-1,000 finished proxy requests (the body may be `Content-Encoding: gzip`). Usage reaches " +
      "pools, traffic, sessions and the request log within seconds, exactly once: the same `batch_id` again is " +
      "accepted and counted once (`duplicate: true`, with the first answer's counts). Records of unknown or deleted " +
      "sub-users are dropped and counted; an invalid record fails the whole batch (422 naming its index).",
    request: { body: jsonBody(usageBatchSchema) },
    errors: ["payload_too_large"],
    responses: {
      202: jsonContent(
        z
          .object({
            accepted: integer(0, 1000),
            dropped: integer(0, 1000),
            duplicate: z.boolean().openapi({ description: "This batch_id was reported before." }),
          })
          .openapi("UsageAccepted"),
        "Accepted.",
      ),
    },
  },
  "GatewayToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(await ingestUsageBatch(c.var.ctx, c.req.valid("json")), 202);
};
