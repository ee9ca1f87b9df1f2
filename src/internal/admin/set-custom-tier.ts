import { type RouteHandler, z } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { setCustomTier } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { id, idParam, integer, usdAmount } from "../../platform/fields";
import { fromMinor, toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { bandwidthProduct, tags } from "./shared";
import { tierBody } from "./tier-body";

export const route = internalRoute(
  {
    operationId: "adminSetCustomTier",
    method: "put",
    path: "/accounts/{id}/custom-tiers/{product}",
    tags,
    summary: "Set an account's enterprise (custom) tier",
    description: "Makes `plan: enterprise` subscribable for that account and product.",
    request: {
      params: z.object({ id: idParam("account"), product: bandwidthProduct }),
      body: jsonBody(tierBody),
    },
    errors: ["not_found"],
    responses: {
      200: jsonContent(
        z
          .object({
            account_id: id("account"),
            product: bandwidthProduct,
            gb_included: integer(1, 10_000_000),
            monthly_price_usd: usdAmount(),
          })
          .openapi("CustomTier"),
        "The custom tier.",
      ),
    },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id, product } = c.req.valid("param");
  const account = await findAccount(c.get("ctx"), id);
  const { gb_included, monthly_price_usd } = c.req.valid("json");
  const tier = await setCustomTier(c.get("ctx"), account.id, {
    product,
    gbIncluded: gb_included,
    monthlyPriceMinor: toMinor(monthly_price_usd),
  });
  return c.json(
    {
      account_id: tier.accountId,
      product: tier.product,
      gb_included: tier.gbIncluded,
      monthly_price_usd: fromMinor(tier.monthlyPriceMinor),
    },
    200,
  );
};
