import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Product } from "../db/schema";
import { ApiError } from "../platform/errors";
import type { Principal } from "./context";

/**
 * A key's product scope covers every resource that belongs to a product: sub-users (all of their products),
 * orders, bandwidth pools, ISP batches, IPs, inventory and whitelists, subscriptions, sessions and traffic.
 * Acting on a resource outside the scope is 403 `subuser_scope_mismatch`; lists that mix products show only
 * what the scope covers.
 */
export function inScope(principal: Principal, products: readonly Product[]): boolean {
  const scope = principal.products;
  return scope === null || products.every((product) => scope.includes(product));
}

export function assertInScope(principal: Principal, products: readonly Product[]): void {
  if (!inScope(principal, products)) {
    throw new ApiError(
      "subuser_scope_mismatch",
      `The API key's product scope (${principal.products?.join(", ")}) does not cover ${products.join(", ")}.`,
    );
  }
}

/**
 * What spans every product of the account (the budget, webhooks and events, reports) is for keys without a product
 * scope: any other key is refused 403 `subuser_scope_mismatch`, told `why`.
 */
export function assertAccountWide(principal: Principal, why: string): void {
  if (principal.products !== null) {
    throw new ApiError("subuser_scope_mismatch", `${why}: use an API key without a product scope.`);
  }
}

/** A list filter for rows of one product: only those the key's scope covers. */
export function productInScope(principal: Principal, column: SQLiteColumn): SQL | undefined {
  const scope = principal.products;
  if (scope === null) return undefined;
  return sql`${column} IN (${sql.join(
    scope.map((product) => sql`${product}`),
    sql`, `,
  )})`;
}

/** A list filter for rows carrying a JSON array of products (sub-users): all of them must be covered. */
export function productsInScope(principal: Principal, column: SQLiteColumn): SQL | undefined {
  const scope = principal.products;
  if (scope === null) return undefined;
  return sql`NOT EXISTS (SELECT 1 FROM json_each(${column}) WHERE value NOT IN (${sql.join(
    scope.map((product) => sql`${product}`),
    sql`, `,
  )}))`;
}

/**
 * A key bound to sub-users (`subuser_ids`) reaches those sub-users alone: their resources, their traffic, nothing
 * of the account's money or totals. An unbound key reaches every sub-user of its account. What a bound key may
 * call at all is declared per operation (`boundKeys` in `apiRoute`); these rules confine what it then sees.
 */
export function reaches(principal: Principal, subuserId: string): boolean {
  return principal.subuserIds === null || principal.subuserIds.includes(subuserId);
}

/**
 * A list filter for rows of a sub-user (its id in `column`): only the sub-users the key reaches. One bound
 * parameter however many they are (a binding holds up to 1,000; D1 binds at most 100 per statement).
 */
export function subusersReached(principal: Principal, column: SQLiteColumn | SQL): SQL | undefined {
  return principal.subuserIds === null ? undefined : idIn(column, principal.subuserIds);
}

export function idIn(column: SQLiteColumn | SQL, ids: readonly string[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/**
 * The sub-users a read of traffic covers: the one its filter names (the caller has checked the key reaches it), or
 * for a bound key without a filter, every sub-user it is bound to; undefined: the whole account.
 */
export function subusersRead(principal: Principal, subuserId: string | undefined): string[] | undefined {
  if (subuserId !== undefined) return [subuserId];
  return principal.subuserIds ?? undefined;
}

/**
 * A bound key changes only what its sub-users' own operation needs (`mayChange`, an allow-list of the request's
 * field names): a field outside it, including any added later, is 403 `subuser_binding`.
 */
export function assertBoundMayChange(principal: Principal, fields: string[], mayChange: ReadonlySet<string>): void {
  if (principal.subuserIds === null) return;
  const refused = fields.filter((field) => !mayChange.has(field));
  if (refused.length > 0) {
    throw new ApiError(
      "subuser_binding",
      `A key bound to sub-users may not change ${refused.join(", ")}: limits, caps, status and the like are the account's.`,
    );
  }
}

/** What spans the account's sub-users (its money, its totals, its settings) is for unbound keys: 403 otherwise. */
export function assertUnbound(principal: Principal, why: string): void {
  if (principal.subuserIds !== null) {
    throw new ApiError("subuser_binding", `${why}: use an API key that is not bound to sub-users.`);
  }
}
