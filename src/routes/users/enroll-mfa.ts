import { type RouteHandler, z } from "@hono/zod-openapi";
import { enrollTotp, RECOVERY_CODE_COUNT } from "../../domain/accounts/mfa";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { requireMfa } from "../../middleware/gates";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";

const body = z
  .strictObject({ method: z.literal("totp") })
  .openapi("MfaEnrollmentRequest", { example: { method: "totp" } });

const enrollment = z
  .object({
    method: z.literal("totp"),
    secret: z
      .string()
      .openapi({ description: "Base32 TOTP secret; shown once.", example: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" }),
    otpauth_uri: z.string().openapi({ example: "otpauth://totp/Proxy%20Account%20API:ops%40acme.example?secret=…" }),
    recovery_codes: z
      .array(z.string())
      .length(RECOVERY_CODE_COUNT)
      .openapi({
        description: "One-time fallback codes; shown once, store them offline.",
        example: ["k7m2p-x9qrt"],
      }),
    status: z.literal("pending_verification"),
  })
  .openapi("MfaEnrollment");

export const route = apiRoute({
  method: "post",
  path: "/users/me/security/mfa",
  tags: ["Account"],
  summary: "Enroll TOTP MFA",
  description:
    "Returns a new TOTP secret and 10 recovery codes, shown once. MFA becomes enabled when the first code is sent to " +
    "`POST /users/me/security/mfa/verify`. Re-enrolling while MFA is enabled needs `X-MFA-Code`.",
  request: { body: jsonBody(body) },
  errors: ["mfa_required"],
  responses: { 201: jsonContent(enrollment, "The pending enrollment.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  await requireMfa(c, account);
  const result = await enrollTotp(domainContext(c.env), account);
  return c.json({ ...result, status: "pending_verification" as const }, 201);
};
