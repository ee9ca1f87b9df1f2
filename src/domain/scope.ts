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
