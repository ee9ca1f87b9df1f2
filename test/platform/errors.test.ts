import { describe, expect, it } from "vitest";
import { errorCatalogue } from "../../src/platform/errors";

describe("error catalogue", () => {
  it("has every code of spec §7 with the spec's status", () => {
    const spec: Record<string, number> = {
      invalid_cron: 422,
      destination_unreachable: 422,
      feature_not_in_plan: 403,
      downgrade_below_usage: 409,
      already_subscribed: 409,
      unknown_plan: 422,
      insufficient_balance: 409,
      kyc_required: 409,
      insufficient_inventory: 422,
      quantity_out_of_range: 422,
      label_taken: 409,
      over_plan_limit: 422,
      subuser_not_found: 404,
      already_whitelisted: 409,
      invalid_cidr: 422,
      over_limit: 422,
      mfa_required: 403,
      email_in_use: 409,
      invalid_billing_address: 422,
      session_not_found: 404,
      subuser_scope_mismatch: 403,
      range_too_wide: 422,
      invalid_group_by: 422,
      rate_limited: 429,
    };
    for (const [code, status] of Object.entries(spec)) {
      expect(errorCatalogue[code as keyof typeof errorCatalogue]?.status, code).toBe(status);
    }
  });

  it("has the platform's own codes with their statuses", () => {
    const platform: Record<string, number> = {
      unauthorized: 401,
      invalid_request: 422,
      invalid_json: 400,
      not_found: 404,
      method_not_allowed: 405,
      idempotency_key_reused: 422,
      idempotency_key_in_use: 409,
      internal_error: 500,
    };
    for (const [code, status] of Object.entries(platform)) {
      expect(errorCatalogue[code as keyof typeof errorCatalogue]?.status, code).toBe(status);
    }
  });
});
