import { and, eq } from "drizzle-orm";
import { type AccountRow, ispBatches, type OrderRow, orders } from "../../db/schema";
import type { Principal } from "../../env";
import { addMonths, now, SECOND, toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { fromMinor, type Minor } from "../../platform/money";
import { keysetPage } from "../../platform/pagination";
import { accountChanged } from "../accounts/account-cache";
import { movementStatements, runGuardedBatch } from "../billing/ledger";
import { addToPoolStatement, gbToMb } from "../billing/pools";
import { type BandwidthProduct, bandwidthPricePerGb, bandwidthTotal, ispAsn } from "../billing/prices";
import type { DomainContext } from "../context";
import { eventStatement, eventTypes } from "../events";
import { newBatchPassword } from "../isp/batches";
import { allocateStatements, availableCount, TIER1_COUNTRIES } from "../isp/inventory";
import { findSubuser } from "../subusers/subusers";

export const ISP_QUANTITY = { min: 5, max: 5000 } as const;

/** KYC is not required by default; an account under risk review needs an approved KYC to order (spec §7). */
export function assertKycClear(account: AccountRow): void {
  if (account.riskReview && account.kycStatus !== "approved") throw new ApiError("kyc_required");
}

export async function orderBandwidth(
  ctx: DomainContext,
  account: AccountRow,
  input: { product: BandwidthProduct; gb: number },
): Promise<OrderRow> {
  assertKycClear(account);
  const pricePerGb = await bandwidthPricePerGb(ctx.db, input.product);
  const total = bandwidthTotal(input.gb, pricePerGb);
  const at = now();
  const order: OrderRow = {
    id: newId("order", at),
    accountId: account.id,
    product: input.product,
    status: "completed",
    totalMinor: total,
    details: { gb: input.gb, price_per_gb: fromMinor(pricePerGb) },
    batchId: null,
    createdAt: at,
    updatedAt: at,
  };
  await runGuardedBatch(ctx.db, [
    ...movementStatements(ctx.db, { accountId: account.id, amount: -total, reason: "order", reference: order.id, at }),
    ctx.db.insert(orders).values(order),
    addToPoolStatement(ctx.db, account.id, input.product, gbToMb(input.gb)),
    eventStatement(ctx.db, {
      accountId: account.id,
      type: eventTypes.orderCompleted,
      payload: { order_id: order.id, product: order.product, total_usd: fromMinor(total) },
      dedupeKey: `${eventTypes.orderCompleted}:${order.id}`,
      at,
    }),
  ]);
  await accountChanged(ctx, account.id);
  return order;
}

export interface IspOrderInput {
  country: string;
  city?: string | null;
  asn: number;
  quantity: number;
  months: number;
  subuser: string;
}

/** How long provisioning takes: configurable, longer for long-tail (non tier-1) countries. */
function provisioningDelayMs(env: Cloudflare.Env, country: string): number {
  const seconds = TIER1_COUNTRIES.has(country) ? env.ISP_PROVISIONING_DELAY_S : env.ISP_LONG_TAIL_PROVISIONING_DELAY_S;
  return Number(seconds) * SECOND;
}

export async function orderIsp(
  ctx: DomainContext,
  principal: Principal,
  account: AccountRow,
  input: IspOrderInput,
): Promise<OrderRow> {
  if (input.quantity < ISP_QUANTITY.min || input.quantity > ISP_QUANTITY.max) {
    throw new ApiError("quantity_out_of_range");
  }
  const city = input.city ?? null;
  if (city !== null && !TIER1_COUNTRIES.has(input.country)) {
    const message = `city: a city can be chosen only in tier-1 countries (${[...TIER1_COUNTRIES].join(", ")}).`;
    throw new ApiError("invalid_request", message, { details: [{ field: "city", message }] });
  }
  const subuser = await findSubuser(ctx, principal, input.subuser);
  if (!subuser.products.includes("isp")) {
    throw new ApiError("subuser_not_found", "The sub-user has no ISP access; create one with the isp product.");
  }
  assertKycClear(account);
  const catalogue = await ispAsn(ctx.db, input.country, input.asn);
  if (!catalogue)
    throw new ApiError("insufficient_inventory", `No IPs of AS${input.asn} are offered in ${input.country}.`);
  const geo = { country: input.country, city, asn: input.asn };
  if ((await availableCount(ctx.db, geo)) < input.quantity) throw new ApiError("insufficient_inventory");

  const at = now();
  const total: Minor = catalogue.pricePerIpMonthMinor * input.quantity * input.months;
  const orderId = newId("order", at);
  const batchId = newId("batch", at);
  const expiresAt = addMonths(at, input.months);
  const password = await newBatchPassword(ctx.env.SEALING_KEY);
  const order: OrderRow = {
    id: orderId,
    accountId: account.id,
    product: "isp",
    status: "provisioning",
    totalMinor: total,
    details: {
      batch_id: batchId,
      quantity: input.quantity,
      country: input.country,
      city,
      asn: input.asn,
      months: input.months,
      price_per_ip_month: fromMinor(catalogue.pricePerIpMonthMinor),
      expires_at: toIso(expiresAt),
    },
    batchId,
    createdAt: at,
    updatedAt: at,
  };
  await runGuardedBatch(
    ctx.db,
    [
      ...movementStatements(ctx.db, { accountId: account.id, amount: -total, reason: "order", reference: orderId, at }),
      ctx.db.insert(orders).values(order),
      ctx.db.insert(ispBatches).values({
        id: batchId,
        accountId: account.id,
        subuserId: subuser.id,
        orderId,
        status: "provisioning",
        country: input.country,
        city,
        asn: input.asn,
        quantity: input.quantity,
        pricePerIpMonthMinor: catalogue.pricePerIpMonthMinor,
        purchasedAt: at,
        periodStart: at,
        expiresAt,
        provisionReadyAt: at + provisioningDelayMs(ctx.env, input.country),
        passwordSealed: password.passwordSealed,
        passwordHash: password.passwordHash,
        createdAt: at,
        updatedAt: at,
      }),
      ...allocateStatements(ctx.db, {
        country: input.country,
        city,
        asn: input.asn,
        batchId,
        quantity: input.quantity,
        status: "reserved",
        expectedTotal: input.quantity,
        at,
      }),
    ],
    { inventory: new ApiError("insufficient_inventory") },
  );
  await accountChanged(ctx, account.id);
  return order;
}

export function listOrders(ctx: DomainContext, principal: Principal, query: { cursor?: string; limit: number }) {
  const page = keysetPage(orders.id, query);
  return ctx.db
    .select()
    .from(orders)
    .where(and(eq(orders.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

export async function findOrder(ctx: DomainContext, principal: Principal, id: string): Promise<OrderRow> {
  const order = isId("order", id)
    ? await ctx.db
        .select()
        .from(orders)
        .where(and(eq(orders.id, id), eq(orders.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!order) throw new ApiError("not_found", "No order with this id exists.");
  return order;
}
