import { type RouteHandler, z } from "@hono/zod-openapi";
import { currentAccount } from "../../domain/accounts/accounts";
import { enrollTotp, RECOVERY_CODE_COUNT } from "../../domain/accounts/mfa";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";

const body = z
  .strictObject({ method: z.literal("totp") })
  .openapi("MfaEnrollmentRequest", { example: { method: "totp" } });

const enrollment = z
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

export const route = apiRoute({
  operationId: "enrollMfa",
  method: "post",
  path: "/users/me/security/mfa",
  tags: ["Account"],
  summary: "Enroll TOTP MFA",
  description:
    "Returns a new TOTP secret and 10 recovery codes, shown once. MFA becomes enabled when the first code is sent to " +
    "`POST /users/me/security/mfa/verify`. Re-enrolling while MFA is enabled needs `X-MFA-Code`.",
  request: { body: jsonBody(body) },
  mfa: true,
  secret: true,
  responses: { 201: jsonContent(enrollment, "The pending enrollment.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const result = await enrollTotp(ctx, await currentAccount(ctx, principal), mfaCode(c));
  return c.json(
    {
      method: result.method,
      secret: result.secret,
      otpauth_uri: result.otpauthUri,
      recovery_codes: result.recoveryCodes,
      status: "pending_verification" as const,
    },
    201,
  );
};
