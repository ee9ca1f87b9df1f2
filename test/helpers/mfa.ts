import * as OTPAuth from "otpauth";
import { expect } from "vitest";
import type { TestAccount } from "./accounts";
import { call, json } from "./http";

export const MFA = "/v1/users/me/security/mfa";

/** The TOTP code of `secret` at `timestamp` (ms). */
export function codeAt(secret: string, timestamp: number): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp });
}

/** Enrolls TOTP and verifies it with the current code: MFA is on. */
export async function enableMfa(account: TestAccount): Promise<{ secret: string; recovery: string[] }> {
  const enrollment = await json(await call("POST", MFA, { token: account.token, body: { method: "totp" } }));
  const verified = await call("POST", `${MFA}/verify`, {
    token: account.token,
    body: { code: codeAt(enrollment.secret, Date.now()) },
  });
  expect(verified.status).toBe(200);
  return { secret: enrollment.secret, recovery: enrollment.recovery_codes };
}
