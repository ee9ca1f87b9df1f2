import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { priceCatalogue, setBandwidthPrice, setCustomTier, setIspAsnPrice, setTier } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { id, idParam, integer, queryInteger, text, token, usd, usdAmount } from "../../platform/fields";
import { fromMinor, toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { presentPriceCatalogue, priceCatalogueSchema } from "../../resources/admin";

const tags = ["Admin"];
const MAX_PRICE_USD = 1_000_000;
const bandwidthProduct = z.enum(["residential", "mobile"]);
const tierPlan = token(/^[a-z-]{1,32}$/, 32, "must be a tier name");
const catalogueResponse = { 200: jsonContent(priceCatalogueSchema, "The catalogue.") };

const getCatalogueRoute = internalRoute(
  {
    operationId: "adminGetPriceCatalogue",
    method: "get",
    path: "/prices",
    tags,
    summary: "The price catalogue",
    description: "Bandwidth prices per GB, ISP prices per ASN, and subscription tiers.",
    responses: catalogueResponse,
  },
  "AdminToken",
);

const putBandwidthRoute = internalRoute(
  {
    operationId: "adminSetBandwidthPrice",
    method: "put",
    path: "/prices/bandwidth/{product}",
    tags,
    summary: "Set a pay-as-you-go bandwidth price",
    description: "Applies to orders placed from now on.",
    request: {
      params: z.object({ product: bandwidthProduct }),
      body: jsonBody(
        z
          .strictObject({ price_per_gb_usd: usd(MAX_PRICE_USD) })
          .openapi("BandwidthPrice", { example: { price_per_gb_usd: 4.5 } }),
      ),
    },
    responses: catalogueResponse,
  },
  "AdminToken",
);

const putIspRoute = internalRoute(
  {
    operationId: "adminSetIspAsnPrice",
    method: "put",
    path: "/prices/isp/{country}/{asn}",
    tags,
    summary: "Set the price of an ISP ASN",
    description: "Applies to orders placed from now on; existing batches keep their price.",
    request: {
      params: z.object({
        country: token(/^[A-Z]{2}$/, 2, "must be an upper-case ISO 3166-1 alpha-2 code"),
        asn: queryInteger(1, 4_294_967_295),
      }),
      body: jsonBody(
        z
          .strictObject({
            carrier: text(100, 1),
            premium: z.boolean().default(false),
            price_per_ip_month_usd: usd(MAX_PRICE_USD),
          })
          .openapi("IspAsnPrice", { example: { carrier: "Comcast", premium: false, price_per_ip_month_usd: 6 } }),
      ),
    },
    responses: catalogueResponse,
  },
  "AdminToken",
);

const tierBody = z
  .strictObject({ gb_included: integer(1, 10_000_000), monthly_price_usd: usd(MAX_PRICE_USD) })
  .openapi("TierPrice", { example: { gb_included: 500, monthly_price_usd: 1500 } });

const putTierRoute = internalRoute(
  {
    operationId: "adminSetTier",
    method: "put",
    path: "/prices/tiers/{product}/{plan}",
    tags,
    summary: "Set a subscription tier",
    description: "Creates or changes a tier; subscriptions take the new terms at their next renewal.",
    request: { params: z.object({ product: bandwidthProduct, plan: tierPlan }), body: jsonBody(tierBody) },
    responses: catalogueResponse,
  },
  "AdminToken",
);

const putCustomTierRoute = internalRoute(
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

export function adminPriceRoutes(app: OpenAPIHono<AppEnv>): void {
  const catalogue = async (ctx: AppEnv["Variables"]["ctx"]) => presentPriceCatalogue(await priceCatalogue(ctx));

  app.openapi(getCatalogueRoute, async (c) => c.json(await catalogue(c.var.ctx), 200));

  app.openapi(putBandwidthRoute, async (c) => {
    await setBandwidthPrice(c.var.ctx, c.req.valid("param").product, toMinor(c.req.valid("json").price_per_gb_usd));
    return c.json(await catalogue(c.var.ctx), 200);
  });

  app.openapi(putIspRoute, async (c) => {
    const { carrier, premium, price_per_ip_month_usd } = c.req.valid("json");
    await setIspAsnPrice(c.var.ctx, {
      ...c.req.valid("param"),
      carrier,
      premium,
      pricePerIpMonthMinor: toMinor(price_per_ip_month_usd),
    });
    return c.json(await catalogue(c.var.ctx), 200);
  });

  app.openapi(putTierRoute, async (c) => {
    const { gb_included, monthly_price_usd } = c.req.valid("json");
    await setTier(c.var.ctx, {
      ...c.req.valid("param"),
      gbIncluded: gb_included,
      monthlyPriceMinor: toMinor(monthly_price_usd),
    });
    return c.json(await catalogue(c.var.ctx), 200);
  });

  app.openapi(putCustomTierRoute, async (c) => {
    const { id, product } = c.req.valid("param");
    const account = await findAccount(c.var.ctx, id);
    const { gb_included, monthly_price_usd } = c.req.valid("json");
    const tier = await setCustomTier(c.var.ctx, account.id, {
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
  });
}
