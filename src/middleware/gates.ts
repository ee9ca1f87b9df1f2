import type { Context } from "hono";
import type { AccountRow, Plan } from "../db/schema";
import { consumeMfaCode } from "../domain/accounts/mfa";
import { domainContext } from "../domain/context";
import { planAtLeast } from "../domain/plans";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";

export const MFA_HEADER = "X-MFA-Code";

/** Plan gate: 403 `feature_not_in_plan` below `minimum` (e.g. reports need Pro). */
export function requirePlan(c: Context<AppEnv>, minimum: Plan, feature: string): void {
  if (!planAtLeast(c.var.principal.plan, minimum)) {
    throw new ApiError("feature_not_in_plan", `${feature} requires the ${minimum} plan or above.`);
  }
}

/**
 * MFA gate: when the account has MFA enabled, the request must carry a current TOTP code
 * (or an unused recovery code) in `X-MFA-Code`; otherwise 403 `mfa_required`.
 */
export async function requireMfa(c: Context<AppEnv>, account: AccountRow): Promise<void> {
  if (!account.mfaEnabled) return;
  const code = c.req.header(MFA_HEADER);
  if (!code) throw new ApiError("mfa_required", `This action requires an MFA code in the ${MFA_HEADER} header.`);
  if (!(await consumeMfaCode(domainContext(c.env), account, code))) {
    throw new ApiError("mfa_required", "The MFA code is invalid or was already used.");
  }
}
