import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { listInventory } from "../../domain/isp/inventory";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";

const inventorySchema = z
  .object({
    data: z.array(
      z.object({
        country: z.string(),
        asn: z.number().int(),
        carrier: z.string(),
        premium: z.boolean().openapi({ description: "Premium ASNs cost about 20% more." }),
        price_per_ip_month_usd: z.number(),
        available: z.number().int(),
        cities: z
          .array(z.object({ city: z.string(), available: z.number().int() }))
          .openapi({ description: "Cities can be chosen in tier-1 countries only; elsewhere this is empty." }),
      }),
    ),
  })
  .openapi("IspInventory", {
    example: {
      data: [
        {
          country: "US",
          asn: 7922,
          carrier: "Comcast",
          premium: false,
          price_per_ip_month_usd: 6,
          available: 6400,
          cities: [{ city: "newyork", available: 6000 }],
        },
      ],
    },
  });

export const route = apiRoute({
  method: "get",
  path: "/isp/inventory",
  tags: ["ISP"],
  summary: "ISP inventory",
  description: "Available quantity, cities and price per ASN.",
  request: {
    query: z.object({
      country: z
        .string()
        .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 code")
        .transform((v) => v.toUpperCase())
        .optional(),
      asn: z.coerce.number().int().positive().optional(),
    }),
  },
  errors: ["invalid_request"],
  responses: { 200: jsonContent(inventorySchema, "Inventory per ASN.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json({ data: await listInventory(domainContext(c.env).db, c.req.valid("query")) }, 200);
};
