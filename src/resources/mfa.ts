import { z } from "@hono/zod-openapi";
import { type Enrollment, RECOVERY_CODE_COUNT } from "../domain/accounts/mfa";
import { token } from "../platform/fields";

/** A TOTP enrollment, the account's or a member's own: what it asks, and what it shows once. */
export const mfaEnrollmentRequestSchema = z
  .strictObject({ method: z.literal("totp") })
  .openapi("MfaEnrollmentRequest", { example: { method: "totp" } });

export const mfaEnrollmentSchema = z
  .object({
    method: z.literal("totp"),
    secret: token(/^[A-Z2-7]{16,64}$/, 64).openapi({
      description: "Base32 TOTP secret; shown once.",
      example: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    }),
    otpauth_uri: token(/^otpauth:\/\/totp\/\S+$/, 512).openapi({
      example: "otpauth://totp/Proxy%20Account%20API:ops%40acme.example?secret=JBSWY3DPEHPK3PXP",
    }),
    recovery_codes: z
      .array(token(/^[a-z2-9]{5}-[a-z2-9]{5}$/, 11))
      .min(RECOVERY_CODE_COUNT)
      .max(RECOVERY_CODE_COUNT)
      .openapi({
        description: "One-time fallback codes; shown once, store them offline.",
        example: [
          "k7m2p-x9qrt",
          "a3b4c-d5e6f",
          "g7h8j-k9m2n",
          "p3q4r-s5t6u",
          "v7w8x-y9z2a",
          "b3c4d-e5f6g",
          "h7j8k-m9n2p",
          "q3r4s-t5u6v",
          "w7x8y-z9a2b",
          "c3d4e-f5g6h",
        ],
      }),
    status: z.literal("pending_verification"),
  })
  .openapi("MfaEnrollment");

export const mfaVerificationSchema = z
  .strictObject({ code: token(/^\d{6}$/, 6, "must be a 6-digit code") })
  .openapi("MfaVerification", { example: { code: "123456" } });

export function presentEnrollment(result: Enrollment): z.infer<typeof mfaEnrollmentSchema> {
  return {
    method: result.method,
    secret: result.secret,
    otpauth_uri: result.otpauthUri,
    recovery_codes: result.recoveryCodes,
    status: "pending_verification" as const,
  };
}
