import { type RouteHandler, z } from "@hono/zod-openapi";
import { doubleTrafficShards } from "../../domain/traffic/resharding";
import { MAX_TRAFFIC_SHARDS } from "../../durable-objects/traffic-store";
import type { AppEnv } from "../../env";
import { id, integer } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { accountParams, tags } from "./shared";

const trafficShards = integer(1, MAX_TRAFFIC_SHARDS).openapi({
  description: "How many traffic stores the account's usage is split over, by sub-user.",
  example: 2,
});

export const route = internalRoute(
  {
    operationId: "adminSetTrafficShards",
    method: "put",
    path: "/accounts/{id}/traffic-shards",
    tags,
    summary: "Split an account's traffic over more stores",
    description:
      'Doubles the traffic stores a busy account\'s usage is split over, by sub-user (docs/scale.md, "Re-sharding an account"): only twice the current count is taken (422 otherwise), up to 64. History stays where it is and is read with the new stores; safe while usage flows.',
    request: {
      params: accountParams,
      body: jsonBody(
        z.strictObject({ traffic_shards: trafficShards }).openapi("AdminTrafficShardsUpdate", {
          example: { traffic_shards: 2 },
        }),
      ),
    },
    errors: ["not_found"],
    responses: {
      200: jsonContent(
        z.object({ account_id: id("account"), traffic_shards: trafficShards }).openapi("AdminTrafficShards", {
          example: { account_id: "usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", traffic_shards: 2 },
        }),
        "The account's traffic shard count now.",
      ),
    },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const shards = await doubleTrafficShards(c.get("ctx"), c.req.valid("param").id, c.req.valid("json").traffic_shards);
  return c.json({ account_id: shards.accountId, traffic_shards: shards.trafficShards }, 200);
};
