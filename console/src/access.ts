import type { Area, Product, Schemas } from "./api";

/** What a key may do, read from the key at sign-in: the console shows only what would not answer 403. */
export interface Access {
  /** Whether the key may read (or write) an area. */
  can: (area: Area, access?: "read" | "write") => boolean;
  /** The products the key may act on, among `among`. */
  productsOf: <P extends Product>(among: readonly P[]) => P[];
  /** The key has no product scope: it may see what spans every product (the budget). */
  accountWide: boolean;
  /** Gated actions need a second factor: the account has MFA (the API consumes each code once). */
  needsMfa: boolean;
}

export function accessOf(key: Schemas["ApiKey"], security: Schemas["SecurityInfo"] | null): Access {
  return {
    can: (area, access = "read") => {
      const granted = key.scopes[area];
      return granted === "write" || (granted === "read" && access === "read");
    },
    productsOf: (among) => among.filter((product) => key.products === null || key.products.includes(product)),
    accountWide: key.products === null,
    needsMfa: security?.mfa_enabled ?? false,
  };
}
