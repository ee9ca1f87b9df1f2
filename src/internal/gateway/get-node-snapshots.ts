import { type RouteHandler, z } from "@hono/zod-openapi";
import { nodeSnapshots } from "../../domain/gateway/node-decisions";
import { snapshotOnWire } from "../../durable-objects/subuser-gate/contract";
import type { AppEnv } from "../../env";
import { callingNode } from "../../middleware/gateway-auth";
import { id, integer, ipText, list, timestamp, token } from "../../platform/fields";
import { OWNER_TAG, OWNER_TAG_LENGTH } from "../../platform/owner-tag";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { targetRulesSchema } from "../../resources/subuser";
import { gatewayName, gatewayProduct, nodeId, shareCount } from "./node-fields";

const limitSchema = z.object({ concurrent: shareCount().nullable(), rps: shareCount().nullable() });

const snapshotSchema = z
  .object({
    name: gatewayName(),
    subuser: id("subuser"),
    account: id("account").openapi({ description: "The sub-user's account: usage records name it." }),
    owner_tag: token(OWNER_TAG, OWNER_TAG_LENGTH)
      .nullable()
      .openapi({
        description:
          "The sub-user's signed owner: a usage record that carries it with `subuser` and `account` needs no " +
          "lookup of its owner (null: not signed yet; the records name no owner).",
      }),
    generations: z.record(token(/^[0-9a-f]{16}$/, 16), integer(1, 2_147_483_647)).openapi({
      description:
        "The sticky-session keys whose generation a termination moved, by key hash (docs/gateway.md, " +
        '"Sticky sessions"): a key not listed is at generation 0.',
    }),
    version: integer(0, Number.MAX_SAFE_INTEGER).openapi({
      format: "int64",
      description: "Grows with every change; a node keeps the highest it has seen.",
    }),
    status: z.enum(["active", "disabled", "deleted"]),
    products: list(gatewayProduct(), 3),
    passwords: list(
      z.object({
        sha256: token(/^[0-9a-f]{64}$/, 64).openapi({ description: "SHA-256 (hex) of a password that works." }),
        until: timestamp()
          .nullable()
          .openapi({ description: "When a rotated-out password stops working (60 s after the rotation)." }),
      }),
      2,
    ),
    whitelist: list(z.object({ product: gatewayProduct(), ip: ipText().or(token(/^[0-9A-Fa-f:./]+$/, 49)) }), 10_000),
    limits: z
      .partialRecord(gatewayProduct(), limitSchema)
      .openapi({ description: "Per product; null: no such limit." }),
    exhausted: z
      .partialRecord(z.enum(["residential", "mobile"]), z.boolean())
      .openapi({ description: "The account's pool of the product is used up (402 bandwidth-exhausted)." }),
    cap: z.object({
      month: token(/^\d{4}-\d{2}$/, 7),
      reached: z
        .boolean()
        .openapi({ description: "The monthly cap is reached in `month` (402 traffic-limit-reached)." }),
    }),
    day_cap: z.object({
      day: token(/^\d{4}-\d{2}-\d{2}$/, 10),
      reached: z.boolean().openapi({ description: "The daily cap is reached on `day` (402 daily-limit-reached)." }),
    }),
    lifetime_cap_reached: z
      .boolean()
      .openapi({ description: "The lifetime cap is reached (402 lifetime-limit-reached) until it is raised." }),
    expires_at: timestamp()
      .nullable()
      .openapi({ description: "From this instant every request is refused (403 subuser-expired), with no push." }),
    target_rules: targetRulesSchema
      .nullable()
      .openapi({ description: "Where requests may go (403 target-denied); null: anywhere." }),
    standing: list(gatewayProduct(), 3).openapi({
      description:
        "The limited products whose limits are standing shares: each node slot uses its part (split as " +
        'docs/gateway.md, "Standing shares", says) with no lease, while the change feed vouches for its slot. The ' +
        "other limited products' limits are leased (`POST /internal/gateway/leases`).",
    }),
  })
  .openapi("GatewaySubuserSnapshot");

export const route = internalRoute(
  {
    operationId: "getGatewaySubuserSnapshots",
    method: "post",
    path: "/subusers",
    tags: ["Gateway"],
    summary: "Snapshots of sub-users, for deciding at the node",
    description:
      "What a gateway node needs to decide a sub-user's requests itself: password hashes (with a rotated-out " +
      "password's end), whitelist, status, products, limits, pool and cap state, and a version. Names with no " +
      "sub-user are listed in `unknown`; a node remembers them for at most 60 s. Changes are pushed on " +
      "`GET /internal/gateway/changes`.",
    request: {
      body: jsonBody(
        z
          .strictObject({ node: nodeId(), names: list(gatewayName(), 100).min(1) })
          .openapi("GatewaySubuserSnapshotsRequest", { example: { node: "node-1", names: ["s1a2b3c4d5e"] } }),
      ),
    },
    secret: true,
    responses: {
      200: jsonContent(
        z
          .object({ subusers: list(snapshotSchema, 100), unknown: list(gatewayName(), 100) })
          .openapi("GatewaySubuserSnapshots"),
        "The snapshots.",
      ),
    },
  },
  "GatewayNode",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { node, names } = c.req.valid("json");
  callingNode(c, node);
  const { snapshots, unknown } = await nodeSnapshots(c.get("ctx"), names);
  return c.json({ subusers: snapshots.map(snapshotOnWire), unknown }, 200);
};
