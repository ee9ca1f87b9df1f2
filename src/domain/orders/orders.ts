import { and, eq, type SQL, sql } from "drizzle-orm";
import { type AccountRow, type OrderRow, orders, type Product } from "../../db/schema";
import { addMonths, now, SECOND } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { assertScope } from "../../platform/scopes";
import { BYTES_PER_MB, gbToBytes } from "../../platform/units";
import { currentAccount } from "../accounts/accounts";
import { auditStatements } from "../audit/audit-log";
import { budgetRefusal } from "../billing/budget";
import { movementStatements } from "../billing/ledger";
import { addToPool } from "../billing/pools";
import { type BandwidthProduct, bandwidthPrice, bandwidthPriceSql, ispAsn } from "../billing/prices";
import type { DomainContext, Principal } from "../context";
import { eventStatement, eventTypes } from "../events";
import { assertIspQuantity, insertBatchStatement, newBatchPassword } from "../isp/batches";
import { allocateStatements, availableCount, TIER1_COUNTRIES } from "../isp/inventory";
import { assertInScope, productInScope } from "../scope";
import { findSubuser } from "../subusers/subusers";
import { commit, type Step } from "../unit-of-work";

/** KYC is not required by default; an account under risk review needs an approved KYC to order (spec §7). */
export function assertKycClear(account: AccountRow): void {
  if (account.riskReview && account.kycStatus !== "approved") throw new ApiError("kyc_required");
}

export type NewOrder = { product: BandwidthProduct; gb: number } | ({ product: "isp" } & IspOrderInput);

export interface IspOrderInput {
  country: string;
  city?: string | null;
  asn: number;
  quantity: number;
  months: number;
  subuserId: string;
}

export async function placeOrder(ctx: DomainContext, principal: Principal, input: NewOrder): Promise<OrderRow> {
  assertInScope(principal, [input.product]);
  return input.product === "isp" ? orderIsp(ctx, principal, input) : orderBandwidth(ctx, principal, input);
}

/**
 * The checks an order runs before it is charged (the balance is the batch's own), its key scope included (which
 * the route enforces for the order itself): the first one failing throws.
 */
export async function checkOrder(ctx: DomainContext, principal: Principal, input: NewOrder): Promise<void> {
  assertScope(principal.scopes, "billing", "write");
  assertInScope(principal, [input.product]);
  if (input.product === "isp") await ispOrderPlan(ctx, principal, input);
  else assertKycClear(await currentAccount(ctx, principal));
}

/**
 * Bandwidth: priced per GB, debited at once, completed, the GB added to the product's pool. One D1 round trip:
 * the database prices the order from the catalogue in force at commit and hands the order back.
 */
async function orderBandwidth(
  ctx: DomainContext,
  principal: Principal,
  input: { product: BandwidthProduct; gb: number },
): Promise<OrderRow> {
  const account = await currentAccount(ctx, principal);
  assertKycClear(account);
  const bytes = gbToBytes(input.gb);
  const mb = bytes / BYTES_PER_MB;
  const price = bandwidthPriceSql(input.product, mb);
  const at = now();
  const id = newId("order", at);
  const insertOrder = ctx.db
    .insert(orders)
    .values({
      id,
      accountId: account.id,
      product: input.product,
      status: "completed",
      totalMinor: price.total,
      details: sql`json_object('gb', ${input.gb}, 'pricePerGbMinor', ${price.perGb})`,
      batchId: null,
      createdAt: at,
      updatedAt: at,
    })
    .returning();
  const statements = [
    insertOrder,
    ...orderAudit(ctx, { id, accountId: account.id, product: input.product }, { gb: input.gb }),
    ...movementStatements(ctx.db, {
      accountId: account.id,
      amount: sql`-${price.total}`,
      reason: "order",
      reference: id,
      at,
    }),
    addToPool(ctx.db, account.id, input.product, bytes),
    orderCompletedEvent(ctx, { id, accountId: account.id, product: input.product, total: price.total }, at),
  ];
  const refusal = async () =>
    budgetRefusal(ctx, account.id, (await bandwidthPrice(ctx, input.product, mb))?.total ?? null);
  const [order] = (await commit(ctx, statements, { budget: refusal })).of(insertOrder);
  return order as OrderRow;
}

/** The order's audit entry: what was bought (the bandwidth price is decided in the database, on the order). */
function orderAudit(
  ctx: DomainContext,
  order: { id: string; accountId: string; product: Product },
  bought: Record<string, unknown>,
): Step[] {
  return auditStatements(ctx, {
    action: "order.created",
    accountId: order.accountId,
    resourceId: order.id,
    products: [order.product],
    after: { product: order.product, ...bought },
  });
}

/** `order.completed`, recorded once per order whatever runs twice. */
function orderCompletedEvent(
  ctx: DomainContext,
  order: { id: string; accountId: string; product: Product; total: Minor | SQL; batchId?: string | null },
  at: number,
): Step {
  return eventStatement(ctx, {
    accountId: order.accountId,
    type: eventTypes.orderCompleted,
    payload: sql`json_object('order_id', ${order.id}, 'product', ${order.product}, 'total_usd', ${order.total} / 100.0${
      order.batchId ? sql`, 'batch_id', ${order.batchId}` : sql``
    })`,
    dedupeKey: `${eventTypes.orderCompleted}:${order.id}`,
    at,
  });
}

/** How long provisioning takes: configurable, longer for long-tail (non tier-1) countries, seconds in the sandbox. */
function provisioningDelayMs(env: Cloudflare.Env, country: string, livemode: boolean): number {
  if (!livemode) return Number(env.SANDBOX_ISP_PROVISIONING_DELAY_S) * SECOND;
  const seconds = TIER1_COUNTRIES.has(country) ? env.ISP_PROVISIONING_DELAY_S : env.ISP_LONG_TAIL_PROVISIONING_DELAY_S;
  return Number(seconds) * SECOND;
}

/**
 * What an ISP order would buy, checked as the order checks it (quantity, city, sub-user, KYC, catalogue, stock):
 * the first rule it breaks is thrown. The quote and the order run it alike.
 */
async function ispOrderPlan(ctx: DomainContext, principal: Principal, input: IspOrderInput) {
  assertIspQuantity(input.quantity);
  const city = input.city ?? null;
  if (city !== null && !TIER1_COUNTRIES.has(input.country)) {
    const message = `city: a city can be chosen only in tier-1 countries (${[...TIER1_COUNTRIES].join(", ")}).`;
    throw new ApiError("invalid_request", message, { details: [{ field: "city", message }] });
  }
  const subuser = await findSubuser(ctx, principal, input.subuserId);
  if (!subuser.products.includes("isp")) {
    throw new ApiError("subuser_not_found", "The sub-user has no ISP access; create one with the isp product.");
  }
  const account = await currentAccount(ctx, principal);
  assertKycClear(account);
  const catalogue = await ispAsn(ctx, input.country, input.asn);
  if (!catalogue) {
    throw new ApiError("insufficient_inventory", `No IPs of AS${input.asn} are offered in ${input.country}.`);
  }
  const geo = { accountId: account.id, country: input.country, city, asn: input.asn };
  if ((await availableCount(ctx, geo)) < input.quantity) throw new ApiError("insufficient_inventory");
  return { subuser, account, geo, catalogue, total: ispTotal(catalogue.pricePerIpMonthMinor, input) };
}

/** The price of ISP IPs: per IP and month, for the quantity and months ordered. */
export function ispTotal(pricePerIpMonth: Minor, order: { quantity: number; months: number }): Minor {
  return pricePerIpMonth * order.quantity * order.months;
}

/** ISP: debited at once; a batch is created with its IPs reserved, and the order is provisioning until the job completes it. */
async function orderIsp(ctx: DomainContext, principal: Principal, input: IspOrderInput): Promise<OrderRow> {
  const { subuser, account, geo, catalogue, total } = await ispOrderPlan(ctx, principal, input);
  const at = now();
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
      batchId,
      quantity: input.quantity,
      ...geo,
      months: input.months,
      pricePerIpMonthMinor: catalogue.pricePerIpMonthMinor,
      expiresAt,
    },
    batchId,
    createdAt: at,
    updatedAt: at,
  };
  await commit(
    ctx,
    [
      ...movementStatements(ctx.db, { accountId: account.id, amount: -total, reason: "order", reference: orderId, at }),
      ctx.db.insert(orders).values(order),
      ...orderAudit(ctx, order, { ...order.details, totalMinor: total }),
      insertBatchStatement(ctx.db, {
        id: batchId,
        subuserId: subuser.id,
        orderId,
        status: "provisioning",
        ...geo,
        quantity: input.quantity,
        pricePerIpMonthMinor: catalogue.pricePerIpMonthMinor,
        purchasedAt: at,
        periodStart: at,
        expiresAt,
        provisionReadyAt: at + provisioningDelayMs(ctx.env, input.country, principal.livemode),
        passwordSealed: password.passwordSealed,
        passwordHash: password.passwordHash,
        createdAt: at,
        updatedAt: at,
      }),
      ...allocateStatements(ctx.db, {
        ...geo,
        batchId,
        quantity: input.quantity,
        status: "reserved",
        expectedTotal: input.quantity,
        at,
      }),
    ],
    { inventory: () => new ApiError("insufficient_inventory"), budget: () => budgetRefusal(ctx, account.id, total) },
  );
  return order;
}

/** The provisioning job finished the order's batch: the order completes (once) and says so in an event. */
export function completeIspOrderStatements(ctx: DomainContext, order: OrderRow, at: number): Step[] {
  return [
    ctx.db
      .update(orders)
      .set({ status: "completed", updatedAt: at })
      .where(and(eq(orders.id, order.id), eq(orders.status, "provisioning"))),
    orderCompletedEvent(ctx, { ...order, total: order.totalMinor }, at),
  ];
}

/** The account's orders that the key's scope covers, newest first. */
export function listOrders(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(orders.id, query);
  return ctx.db
    .select()
    .from(orders)
    .where(and(eq(orders.accountId, principal.accountId), productInScope(principal, orders.product), page.where))
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
  assertInScope(principal, [order.product]);
  return order;
}
