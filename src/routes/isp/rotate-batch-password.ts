import { type RouteHandler, z } from "@hono/zod-openapi";
import { rotateBatchPassword } from "../../domain/isp/batch-actions";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { id, timestamp, token } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchIdParam } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "rotateIspBatchPassword",
  method: "post",
  path: "/isp/batches/{id}/rotate-password",
  tags: ["ISP"],
  summary: "Rotate a batch's password",
  description: "Returns the new password once; the old one keeps working for 60 seconds.",
  request: { params: batchIdParam },
  secret: true,
  errors: ["not_found", "subuser_scope_mismatch", "batch_not_active", "batch_changed"],
  responses: {
    200: jsonContent(
      z
        .object({
          id: id("batch"),
          password: token(/^[0-9A-Za-z]{16,64}$/, 64).openapi({ description: "Shown once." }),
          previous_password_expires_at: timestamp(),
        })
        .openapi("RotatedBatchPassword"),
      "The new password.",
    ),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { batch, password } = await rotateBatchPassword(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(
    { id: batch.id, password, previous_password_expires_at: toIso(batch.previousPasswordUntil as number) },
    200,
  );
};
