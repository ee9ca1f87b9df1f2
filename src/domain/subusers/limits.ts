import type { LimitOverrides, Plan, Product } from "../../db/schema";
import { effectiveLimits } from "../plans";

export const LIMIT_MIN = 1;
export const LIMIT_MAX = 10_000;

/** Spec §8.4: mobile defaults per sub-user (100 concurrent, 200 rps), within the plan's caps. */
const MOBILE_DEFAULTS = { concurrent: 100, rps: 200 };

export interface ProductCaps {
  /** null = no per-sub-user cap (ISP is limited per IP, spec §8.2). */
  concurrent: number | null;
  rps: number | null;
}

/** The plan's per-sub-user caps for one product (spec §8.2, §8.3, with the account's overrides). */
export function planCaps(plan: Plan, overrides: LimitOverrides | null, product: Product): ProductCaps {
  if (product === "isp") return { concurrent: null, rps: null };
  const limits = effectiveLimits(plan, overrides);
  return { concurrent: limits.concurrent[product], rps: limits.rps[product] };
}

/** The strictest cap over a sub-user's products, per limit; null when none of them caps it. */
export function capsFor(plan: Plan, overrides: LimitOverrides | null, products: Product[]): ProductCaps {
  const caps = products.map((product) => planCaps(plan, overrides, product));
  const strictest = (values: Array<number | null>) => {
    const numbers = values.filter((v): v is number => v !== null);
    return numbers.length > 0 ? Math.min(...numbers) : null;
  };
  return { concurrent: strictest(caps.map((c) => c.concurrent)), rps: strictest(caps.map((c) => c.rps)) };
}

/** Defaults for omitted limits: the plan's cap, or the §8.4 mobile default when lower; 10,000 when uncapped. */
export function defaultLimits(plan: Plan, overrides: LimitOverrides | null, products: Product[]) {
  const caps = capsFor(plan, overrides, products);
  const mobile = products.includes("mobile");
  const concurrent = Math.min(caps.concurrent ?? LIMIT_MAX, mobile ? MOBILE_DEFAULTS.concurrent : LIMIT_MAX);
  const rps = Math.min(caps.rps ?? LIMIT_MAX, mobile ? MOBILE_DEFAULTS.rps : LIMIT_MAX);
  return { concurrent: Math.min(concurrent, LIMIT_MAX), rps: Math.min(rps, LIMIT_MAX) };
}

/** The limits the gate enforces for one product: the sub-user's own, capped by the plan's current caps. */
export function enforcedLimits(
  plan: Plan,
  overrides: LimitOverrides | null,
  product: Product,
  own: { concurrentMax: number; rpsMax: number },
): ProductCaps {
  if (product === "isp") return { concurrent: null, rps: null };
  const caps = planCaps(plan, overrides, product);
  return {
    concurrent: Math.min(own.concurrentMax, caps.concurrent ?? LIMIT_MAX),
    rps: Math.min(own.rpsMax, caps.rps ?? LIMIT_MAX),
  };
}
