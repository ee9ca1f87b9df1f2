import { type RouteHandler, z } from "@hono/zod-openapi";
import { acknowledgeTrafficSpike } from "../../domain/subusers/traffic-spikes";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent, optionalJsonBody } from "../../platform/route-definitions";
import { presentTrafficSpike, trafficSpikeIdParam, trafficSpikeSchema } from "../../resources/traffic-spike";

const body = z
  .strictObject({
    normal: z
      .boolean()
      .optional()
      .openapi({
        description:
          "`true`: this traffic is normal for the sub-user. Its baseline is then at least the episode's peak rate " +
          "(at most 100 GB and 1,000,000 requests an hour) for 28 days, in place of any earlier lesson of the " +
          "sub-user, so the same level does not alarm again. `false` undoes this episode's lesson. Either works on " +
          "an episode already acknowledged; left out, nothing is taught.",
      }),
  })
  .openapi("TrafficSpikeAcknowledge", { example: { normal: true } });

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
    "it is. An episode without an action is only marked acknowledged. Acknowledging again changes nothing but " +
    "the lesson (`normal`): the body is optional.",
  request: { params: trafficSpikeIdParam, body: optionalJsonBody(body) },
  errors: ["traffic_spike_not_found", "subuser_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(trafficSpikeSchema, "The acknowledged traffic spike.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const spike = await acknowledgeTrafficSpike(
    c.get("ctx"),
    c.get("principal"),
    c.req.valid("param").id,
    c.req.valid("json"),
  );
  return c.json(presentTrafficSpike(spike), 200);
};
