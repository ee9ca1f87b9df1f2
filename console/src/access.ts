import type { Area, Product, Schemas } from "./api";

/** What the signed-in key or member may do: the console shows only what would not answer 403. */
export interface Access {
  /** Whether the key or member may read (or write) an area. */
  can: (area: Area, access?: "read" | "write") => boolean;
  /** The products the key may act on, among `among`. */
  productsOf: <P extends Product>(among: readonly P[]) => P[];
  /** The key has no product scope: it may see what spans every product (the budget). */
  accountWide: boolean;
  /** Gated actions need a second factor: the account has MFA (the API consumes each code once). */
  needsMfa: boolean;
}

/**
 * The access of scopes (a key's, or a member's role's: null = everything, an owner) within products (null = every
 * product; a member's role spans them all).
 */
export function accessOf(
  scopes: Schemas["ApiKeyScopes"] | null,
  products: readonly Product[] | null,
  security: Schemas["SecurityInfo"] | null,
): Access {
  return {
    can: (area, access = "read") => {
      if (scopes === null) return true;
      const granted = scopes[area];
      return granted === "write" || (granted === "read" && access === "read");
    },
    productsOf: (among) => among.filter((product) => products === null || products.includes(product)),
    accountWide: products === null,
    needsMfa: security?.mfa_enabled ?? false,
  };
}
