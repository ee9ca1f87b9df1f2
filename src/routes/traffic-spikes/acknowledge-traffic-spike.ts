import type { RouteHandler } from "@hono/zod-openapi";
import { acknowledgeTrafficSpike } from "../../domain/subusers/traffic-spikes";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentTrafficSpike, trafficSpikeIdParam, trafficSpikeSchema } from "../../resources/traffic-spike";

export const route = apiRoute({
  operationId: "acknowledgeTrafficSpike",
  method: "post",
  path: "/traffic-spikes/{id}/acknowledge",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "Acknowledge a traffic spike",
  description:
    "Lifts the episode's own action at once: a sub-user it disabled is active again, a cap it set is removed (the " +
    "gateway's next decision uses it). A status the customer set before, during or after the episode is left as " +
    "it is. An episode without an action is only marked acknowledged. Acknowledging again changes nothing.",
  request: { params: trafficSpikeIdParam },
  errors: ["traffic_spike_not_found", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(trafficSpikeSchema, "The acknowledged traffic spike.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const spike = await acknowledgeTrafficSpike(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentTrafficSpike(spike), 200);
};
