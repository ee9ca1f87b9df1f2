import { type RouteHandler, z } from "@hono/zod-openapi";
import { listInventory } from "../../domain/isp/inventory";
import type { AppEnv } from "../../env";
import { countryCode, queryInteger } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { inventorySchema, presentInventory } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "getIspInventory",
  method: "get",
  path: "/isp/inventory",
  tags: ["ISP"],
  summary: "ISP inventory",
  description: "Available quantity, cities and price per ASN.",
  request: {
    query: z.object({
      country: countryCode()
        .transform((code) => code.toUpperCase())
        .optional(),
      asn: queryInteger(1, 4_294_967_295).optional(),
    }),
  },
  errors: ["invalid_request", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(inventorySchema, "Inventory per ASN.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentInventory(await listInventory(c.get("ctx"), c.get("principal"), c.req.valid("query"))), 200);
};
