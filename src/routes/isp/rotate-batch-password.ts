import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { rotateBatchPassword } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { batchIdParam } from "../../schemas/commerce";

export const route = apiRoute({
  method: "post",
  path: "/isp/batches/{id}/rotate-password",
  tags: ["ISP"],
  summary: "Rotate a batch's password",
  description: "Returns the new password once; the old one keeps working for 60 seconds.",
  request: { params: batchIdParam },
  errors: ["not_found", "subuser_scope_mismatch", "batch_not_active", "batch_changed"],
  responses: {
    200: jsonContent(
      z
        .object({ id: z.string(), password: z.string(), previous_password_expires_at: z.iso.datetime() })
        .openapi("RotatedBatchPassword"),
      "The new password.",
    ),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { batch, password } = await rotateBatchPassword(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json(
    { id: batch.id, password, previous_password_expires_at: toIso(batch.previousPasswordUntil as number) },
    200,
  );
};
