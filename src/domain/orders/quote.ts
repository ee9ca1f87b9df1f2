import type { Product } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { Minor } from "../../platform/money";
import { BYTES_PER_MB, gbToBytes } from "../../platform/units";
import { currentAccount } from "../accounts/accounts";
import { budgetCheck } from "../billing/budget";
import { bandwidthPrice, ispAsn } from "../billing/prices";
import type { DomainContext, Principal } from "../context";
import { inScope } from "../scope";
import { checkOrder, ispTotal, type NewOrder } from "./orders";

export interface LineItem {
  description: string;
  quantity: number;
  unit: "gb" | "ip_month";
  unitPriceMinor: Minor;
  amountMinor: Minor;
}

/** What an order would cost and do, with nothing charged or reserved. */
export interface OrderQuote {
  product: Product;
  /** Null when the order cannot be priced (an ASN not offered in that country). */
  totalMinor: Minor | null;
  lineItems: LineItem[];
  balanceMinor: Minor;
  balanceAfterMinor: Minor | null;
  /** The error the order would get now, or null when it would go through. */
  error: ApiError | null;
}

/**
 * Prices an order as placing it would (the same pricing: the database's bandwidth price, the catalogue's ISP
 * price) and runs the order's checks, reporting the first rule it would break instead of throwing it.
 */
export async function quoteOrder(ctx: DomainContext, principal: Principal, input: NewOrder): Promise<OrderQuote> {
  const checked = checkOrder(ctx, principal, input).then(() => null, refusal);
  if (!inScope(principal, [input.product])) {
    // The order's refusal, and nothing read of the product: its prices are the product's, which the key cannot see.
    const [account, error] = await Promise.all([currentAccount(ctx, principal), checked]);
    const unquoted = { totalMinor: null, lineItems: [], balanceAfterMinor: null };
    return { product: input.product, ...unquoted, balanceMinor: account.balanceMinor, error };
  }
  const [account, lineItems, error] = await Promise.all([
    currentAccount(ctx, principal),
    priceOrder(ctx, input),
    checked,
  ]);
  const totalMinor = lineItems ? lineItems.reduce((sum, item) => sum + item.amountMinor, 0) : null;
  // An ISP order without a price fails its checks (no such ASN); a bandwidth product without one is not sold.
  const unpriced =
    lineItems === null && input.product !== "isp"
      ? new ApiError("insufficient_inventory", `${input.product} bandwidth is not offered.`)
      : null;
  const balanceAfterMinor = totalMinor === null ? null : account.balanceMinor - totalMinor;
  const overdraws = balanceAfterMinor !== null && balanceAfterMinor < 0;
  const overBudget = totalMinor === null ? null : await budgetCheck(ctx, account.id, totalMinor);
  return {
    product: input.product,
    totalMinor,
    lineItems: lineItems ?? [],
    balanceMinor: account.balanceMinor,
    balanceAfterMinor,
    error: error ?? unpriced ?? (overdraws ? new ApiError("insufficient_balance") : overBudget),
  };
}

/** An order's check that failed: the error it would answer. */
function refusal(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  throw thrown;
}

/** The order's line items at today's prices, or null when it cannot be priced. */
async function priceOrder(ctx: DomainContext, input: NewOrder): Promise<LineItem[] | null> {
  if (input.product === "isp") {
    const catalogue = await ispAsn(ctx, input.country, input.asn);
    if (!catalogue) return null;
    return [
      {
        description: `${input.quantity} ISP IPs of AS${input.asn} in ${input.country} for ${input.months} month(s)`,
        quantity: input.quantity * input.months,
        unit: "ip_month",
        unitPriceMinor: catalogue.pricePerIpMonthMinor,
        amountMinor: ispTotal(catalogue.pricePerIpMonthMinor, input),
      },
    ];
  }
  const row = await bandwidthPrice(ctx, input.product, gbToBytes(input.gb) / BYTES_PER_MB);
  if (!row) return null;
  return [
    {
      description: `${input.gb} GB of ${input.product} bandwidth`,
      quantity: input.gb,
      unit: "gb",
      unitPriceMinor: row.perGb,
      amountMinor: row.total,
    },
  ];
}
