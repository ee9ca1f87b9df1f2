import { type RouteHandler, z } from "@hono/zod-openapi";
import { listTrafficSpikes } from "../../domain/subusers/traffic-spikes";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentTrafficSpike, trafficSpikeSchema } from "../../resources/traffic-spike";

const query = paginationQuery.extend({
  subuser: idParam("subuser").optional(),
  digest: idParam("trafficSpikeDigest").optional().openapi({
    description: "Only the episodes one `subuser.traffic_spike` notification announced (its `digest`).",
  }),
  active: z.enum(["true", "false"]).optional().openapi({
    description: "`true`: only episodes still open or whose action waits to be acknowledged.",
  }),
});

export const route = apiRoute({
  operationId: "listTrafficSpikes",
  method: "get",
  path: "/traffic-spikes",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "List traffic spikes",
  description:
    "Spike episodes of the account's sub-users, newest first: a sub-user's traffic (bytes or requests) well above " +
    "its own baseline, the same hour of the week over its past 4 weeks (a floor for new sub-users). An episode is " +
    "detected within about 15 minutes of its start, ends after its rate stays back near the baseline for 30 " +
    "minutes, and raises `subuser.traffic_spike_ended` once. Starts are announced by `subuser.traffic_spike`, one per " +
    "account per hour: episodes that start within an hour of the account's last one are announced together at " +
    "its end (the episode is listed here, and its action taken, at once).",
  request: { query },
  paginated: true,
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(trafficSpikeSchema), "A page of traffic spikes.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { subuser, digest, active, ...page } = c.req.valid("query");
  const rows = await listTrafficSpikes(c.get("ctx"), c.get("principal"), {
    ...page,
    subuserId: subuser,
    digestId: digest,
    active: active === "true",
  });
  return c.json(toPage(c, rows, page.limit, presentTrafficSpike), 200);
};
