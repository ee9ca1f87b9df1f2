import type { LimitOverrides, Plan, Product } from "../db/schema";
import { ApiError } from "../platform/errors";
import { type GatedFeature, planAtLeast, planGates } from "../vocabulary";
import type { Principal } from "./context";

export interface ApiRateLimits {
  /** Requests per rolling 60 seconds. */
  perMinute: number;
  /** Requests per rolling 24 hours; null = unlimited. */
  perDay: number | null;
}

export interface PlanLimits {
  api: ApiRateLimits;
  /** Gateway concurrent connections per sub-user (spec §8.2); ISP has per-IP limits only. */
  concurrent: Record<Exclude<Product, "isp">, number>;
  /** Gateway requests per rolling second per sub-user (spec §8.3). */
  rps: Record<Exclude<Product, "isp">, number>;
}

const trial: PlanLimits = {
  api: { perMinute: 30, perDay: 1_000 },
  concurrent: { residential: 25, mobile: 10 },
  rps: { residential: 50, mobile: 25 },
};
const starter: PlanLimits = {
  api: { perMinute: 60, perDay: 10_000 },
  concurrent: { residential: 200, mobile: 50 },
  rps: { residential: 200, mobile: 100 },
};
const pro: PlanLimits = {
  api: { perMinute: 600, perDay: null },
  concurrent: { residential: 600, mobile: 200 },
  rps: { residential: 1_000, mobile: 500 },
};
const business: PlanLimits = {
  api: { perMinute: 1_200, perDay: null },
  concurrent: { residential: 2_000, mobile: 500 },
  rps: { residential: 3_000, mobile: 1_500 },
};

/**
 * Spec §8 limits per plan. `pay-as-you-go` has no row in the spec's tables and uses Starter's;
 * `enterprise` is "custom": Business values unless the account carries overrides (docs/decisions.md).
 */
export const planLimits: Record<Plan, PlanLimits> = {
  trial,
  "pay-as-you-go": starter,
  starter,
  pro,
  business,
  enterprise: business,
};

/** Calls without a valid API key are limited per client address, so guessing keys or scanning costs time. */
export const unauthenticatedLimits: ApiRateLimits = { perMinute: 60, perDay: 1_000 };

/** The plan gate of a domain verb: 403 `feature_not_in_plan` below the feature's plan (`planGates`). */
export function assertPlanHas(principal: Principal, feature: GatedFeature): void {
  const { minimum, name } = planGates[feature];
  if (!planAtLeast(principal.plan, minimum)) {
    throw new ApiError("feature_not_in_plan", `${name} requires the ${minimum} plan or above.`);
  }
}

/** The limits in force for an account: its plan's, with the account's overrides on top. */
export function effectiveLimits(plan: Plan, overrides: LimitOverrides | null | undefined): PlanLimits {
  const base = planLimits[plan];
  if (!overrides) return base;
  return {
    api: {
      perMinute: overrides.apiBurstPerMin ?? base.api.perMinute,
      perDay: overrides.apiDaily === undefined ? base.api.perDay : overrides.apiDaily,
    },
    concurrent: { ...base.concurrent, ...withoutIsp(overrides.concurrent) },
    rps: { ...base.rps, ...withoutIsp(overrides.rps) },
  };
}

function withoutIsp(values: Partial<Record<Product, number>> | undefined) {
  const { isp: _isp, ...rest } = values ?? {};
  return rest;
}
