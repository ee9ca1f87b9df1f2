import { type RouteHandler, z } from "@hono/zod-openapi";
import { findPool, MB_PER_GB } from "../../domain/billing/pools";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";

const balanceSchema = z
  .object({
    product: z.enum(["residential", "mobile"]),
    gb_purchased: z.number().openapi({ description: "All GB bought: orders and subscription periods." }),
    gb_used: z.number(),
    gb_remaining: z.number().openapi({ example: 37.5 }),
  })
  .openapi("BandwidthBalance");

export const route = apiRoute({
  method: "get",
  path: "/{product}/balance",
  tags: ["Orders"],
  summary: "Bandwidth pool of a product",
  description: "The account's prepaid GB for a gateway product, shared by all its sub-users of that product.",
  request: { params: z.object({ product: z.enum(["residential", "mobile"]) }) },
  errors: ["invalid_request"],
  responses: { 200: jsonContent(balanceSchema, "The pool.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { product } = c.req.valid("param");
  const pool = await findPool(domainContext(c.env).db, c.var.principal.accountId, product);
  return c.json(
    {
      product,
      gb_purchased: pool.purchasedMb / MB_PER_GB,
      gb_used: pool.usedMb / MB_PER_GB,
      gb_remaining: Math.max(0, pool.purchasedMb - pool.usedMb) / MB_PER_GB,
    },
    200,
  );
};
