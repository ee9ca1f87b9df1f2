import { type RouteHandler, z } from "@hono/zod-openapi";
import { listRequests } from "../../domain/traffic/traffic";
import type { AppEnv } from "../../env";
import { idParam, list, queryInteger } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentRequest, requestLogEntrySchema } from "../../resources/traffic";
import { productSchema } from "../../resources/vocabulary";

export const route = apiRoute({
  operationId: "listRequests",
  method: "get",
  path: "/{product}/requests",
  tags: ["Traffic"],
  boundKeys: true,
  summary: "Sampled request log",
  description:
    "Recent proxy requests, newest first: at most 1,000 per product, none older than 48 hours. An account sending " +
    "under 100 requests a minute sees every request; above that, a uniform sample of about 100 a minute. The log is " +
    "sampled and is not suitable for billing: use traffic for totals. A request shows within 60 seconds of the " +
    "gateway reporting it; the live tail (`GET /{product}/requests/tail`) shows it within seconds.",
  request: {
    params: z.object({ product: productSchema }),
    query: z.object({
      subuser: idParam("subuser").optional(),
      limit: queryInteger(1, 1000).default(100).openapi({ description: "1-1,000; default 100." }),
    }),
  },
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: {
    200: jsonContent(z.object({ data: list(requestLogEntrySchema, 1000) }).openapi("RequestLog"), "The entries."),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { product } = c.req.valid("param");
  const { subuser, limit } = c.req.valid("query");
  const entries = await listRequests(c.get("ctx"), c.get("principal"), { product, subuserId: subuser, limit });
  return c.json({ data: entries.map(presentRequest) }, 200);
};
