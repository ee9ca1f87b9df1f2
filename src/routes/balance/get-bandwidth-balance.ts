import { type RouteHandler, z } from "@hono/zod-openapi";
import { FORECAST_HORIZON_DAYS, FORECAST_WINDOW_DAYS, usageForecast } from "../../domain/billing/forecast";
import { bandwidthBalance } from "../../domain/billing/pools";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { timestamp } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { bytesToGb } from "../../platform/units";
import { bandwidthProductSchema } from "../../resources/vocabulary";

const gb = () => z.number().openapi({ description: "GB (10^9 bytes)." });

const balanceSchema = z
  .object({
    product: bandwidthProductSchema,
    gb_purchased: gb().openapi({ description: "All GB bought: orders and subscription periods." }),
    gb_used: gb().openapi({
      description:
        "Usage as last settled: each account's usage is metered as it is counted (within 60 seconds of the gateway " +
        "reporting it) and settled here at least every 5 minutes, and at once when the pool passes 80% or 100%: " +
        "`exhausted` is set, and new requests refused, within 60 seconds of the request that ran the pool out.",
    }),
    gb_remaining: gb().openapi({ example: 37.5 }),
    gb_overdrawn: gb().openapi({
      description:
        "Usage reported after the pool ran out (gateways report after the fact); the next top-up covers it first.",
    }),
    exhausted: z
      .boolean()
      .openapi({ description: "New proxy requests of this product are refused (402) until a top-up." }),
    forecast: z
      .object({
        window_days: z.literal(FORECAST_WINDOW_DAYS),
        from: timestamp(),
        to: timestamp(),
        avg_daily_gb: gb().openapi({ description: "Average GB used per day over the window.", example: 2.4 }),
        projected_exhaustion_at: timestamp()
          .nullable()
          .openapi({
            description:
              "When the pool runs out at that average. null when nothing was used in the window, nothing is left, " +
              `or the pool lasts beyond the forecast's horizon of ${FORECAST_HORIZON_DAYS} days at that pace (no ` +
              "run-out in sight).",
          }),
      })
      .openapi("BandwidthForecast", {
        description: "The last 7 days' average use (exact sums of the traffic reported) and where it leads.",
      }),
  })
  .openapi("BandwidthBalance");

export const route = apiRoute({
  operationId: "getBandwidthBalance",
  method: "get",
  path: "/{product}/balance",
  tags: ["Orders"],
  summary: "Bandwidth pool of a product",
  description:
    "The account's prepaid GB for a gateway product, shared by all its sub-users of that product. Usage figures " +
    "are those of the last settlement: at most 5 minutes behind the usage counted. `forecast` averages " +
    "the last 7 days' usage and projects when the pool runs out at that pace.",
  request: { params: z.object({ product: bandwidthProductSchema }) },
  errors: ["invalid_request", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(balanceSchema, "The pool.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { product } = c.req.valid("param");
  const pool = await bandwidthBalance(c.get("ctx"), c.get("principal"), product);
  const forecast = await usageForecast(c.get("ctx"), c.get("principal"), pool);
  return c.json(
    {
      product,
      gb_purchased: bytesToGb(pool.purchasedBytes),
      gb_used: bytesToGb(pool.usedBytes),
      gb_remaining: bytesToGb(Math.max(0, pool.purchasedBytes - pool.usedBytes)),
      gb_overdrawn: bytesToGb(Math.max(0, pool.usedBytes - pool.purchasedBytes)),
      exhausted: pool.usedBytes >= pool.purchasedBytes,
      forecast: {
        window_days: FORECAST_WINDOW_DAYS,
        from: toIso(forecast.from),
        to: toIso(forecast.to),
        avg_daily_gb: bytesToGb(forecast.avgDailyBytes),
        projected_exhaustion_at: forecast.exhaustsAt === null ? null : toIso(forecast.exhaustsAt),
      },
    },
    200,
  );
};
