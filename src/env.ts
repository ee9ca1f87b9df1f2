import type { Plan, Product } from "./db/schema";

/** Who is calling: resolved from the API key by the auth middleware and the key's guard. */
export interface Principal {
  keyId: string;
  accountId: string;
  plan: Plan;
  /** The key's product scope; null = every product. */
  products: Product[] | null;
  /** The guard's revision of the account's data for this request (see account-cache). */
  accountRevision: string;
}

export interface AppEnv {
  Bindings: Cloudflare.Env;
  Variables: {
    requestId: string;
    keyId: string;
    principal: Principal;
    /** Set when a response is a stored idempotent replay. */
    replayed: boolean;
  };
}
