import { type RouteHandler, z } from "@hono/zod-openapi";
import { topUpSandbox } from "../../domain/sandbox/twins";
import type { AppEnv } from "../../env";
import { usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { accountSchema, presentAccount } from "../../resources/account";
import { tags } from "./shared";

/** One top-up at most; the balance itself is bounded only by what the ledger can hold. */
const MAX_TOP_UP_USD = 100_000;

export const route = apiRoute({
  operationId: "topUpTestBalance",
  method: "post",
  path: "/test-helpers/balance/top-up",
  tags,
  sandboxOnly: true,
  scope: { area: "billing" },
  summary: "Top up the balance (sandbox)",
  description:
    "Simulated money: credits the sandbox account's balance (recorded in its ledger like any credit). The sandbox " +
    "account opens with $1,000. Sandbox keys only.",
  request: {
    body: jsonBody(
      z.strictObject({ amount_usd: usd(MAX_TOP_UP_USD) }).openapi("TestBalanceTopUp", { example: { amount_usd: 500 } }),
    ),
  },
  responses: { 200: jsonContent(accountSchema, "The account with its new balance.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await topUpSandbox(c.get("ctx"), c.get("principal"), toMinor(c.req.valid("json").amount_usd));
  return c.json(presentAccount(account), 200);
};
