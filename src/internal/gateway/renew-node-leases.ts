import { type RouteHandler, z } from "@hono/zod-openapi";
import { renewNodeShares, slotHeldBy } from "../../domain/gateway/node-decisions";
import type { AppEnv } from "../../env";
import { callingNode } from "../../middleware/gateway-auth";
import { now, toIso } from "../../platform/clock";
import { integer, list, timestamp } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { gatewayName, gatewayProduct, nodeId, shareCount } from "./node-fields";

const shares = () => z.strictObject({ concurrent: shareCount(), rps: shareCount() });

const renewalSchema = z.strictObject({
  name: gatewayName(),
  product: gatewayProduct(),
  held: shares().openapi({ description: "The shares the node enforces now." }),
  open: shareCount().openapi({ description: "The node's open connections of this sub-user and product." }),
  recent: shareCount()
    .optional()
    .openapi({ description: "Requests the node admitted in its last rolling second. Omitted: `held.rps`." }),
  want: shares().openapi({ description: "What the node's demand asks for; `{0, 0}` gives the shares back." }),
});

const grantSchema = z.object({
  name: gatewayName(),
  product: gatewayProduct(),
  known: z.boolean().openapi({ description: "false: no such sub-user (the shares are 0)." }),
  concurrent: shareCount().nullable().openapi({ description: "Open connections the node may hold; null: no limit." }),
  rps: shareCount().nullable().openapi({ description: "Requests per rolling second; null: no limit." }),
  expires_at: timestamp().openapi({ description: "The shares hold until then (5 s), unless renewed." }),
  version: integer(0, Number.MAX_SAFE_INTEGER).openapi({
    format: "int64",
    description: "The sub-user's snapshot version: a node holding an older one fetches it again.",
  }),
});

export const route = internalRoute(
  {
    operationId: "renewGatewayLeases",
    method: "post",
    path: "/leases",
    tags: ["Gateway"],
    summary: "Renew a node's shares of sub-users' limits",
    description:
      "Each sub-user's gate hands each node a share of `concurrent_max` and `rps_max` for 5 s (60 s while no " +
      "node waits), split max-min fairly over the nodes' demand; the shares of all nodes never sum past a limit. " +
      "A renewal of a product with standing shares (the snapshot's `standing`) ends them first: every node is " +
      "told by a push. A node renews all its busy sub-users in one call, and gives a share back when idle.",
    request: {
      body: jsonBody(
        z
          .strictObject({
            node: nodeId(),
            slot: integer(0, 1023)
              .nullable()
              .optional()
              .openapi({
                description:
                  "The slot the change feed's `hello` gave the node (null or omitted: none). A renewal from a slot " +
                  "stands for that slot's standing shares: they count from then as the node's lease. A slot the " +
                  "calling node does not hold on an open feed is ignored (the renewal counts as from no slot).",
              }),
            leases: list(renewalSchema, 100).min(1),
          })
          .openapi("GatewayLeaseRenewals", {
            example: {
              node: "node-1",
              slot: 0,
              leases: [
                {
                  name: "s1a2b3c4d5e",
                  product: "residential",
                  held: { concurrent: 2, rps: 3 },
                  open: 1,
                  recent: 2,
                  want: { concurrent: 3, rps: 5 },
                },
              ],
            },
          }),
      ),
    },
    responses: {
      200: jsonContent(z.object({ leases: list(grantSchema, 100) }).openapi("GatewayLeases"), "The new shares."),
    },
  },
  "GatewayNode",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { node, slot, leases } = c.req.valid("json");
  const caller = callingNode(c, node);
  const held = await slotHeldBy(c.get("ctx"), caller.node, slot ?? null);
  const grants = await renewNodeShares(
    c.get("ctx"),
    leases.map((lease) => ({ ...lease, node, slot: held, recent: lease.recent ?? lease.held.rps })),
  );
  return c.json(
    {
      leases: leases.map(({ name, product }, index) => {
        const grant = grants[index] ?? null;
        return {
          name,
          product,
          known: grant !== null,
          concurrent: grant ? grant.concurrent : 0,
          rps: grant ? grant.rps : 0,
          expires_at: toIso(grant ? grant.expiresAt : now()),
          version: grant?.version ?? 0,
        };
      }),
    },
    200,
  );
};
