import { z } from "@hono/zod-openapi";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { outboxMail } from "../../domain/mail/mailer";
import type { AppEnv } from "../../env";
import { internalAuth } from "../../middleware/internal-auth";
import { jsonBody } from "../../middleware/json-body";
import { toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { armFault, faultCounts, faultKinds } from "../../platform/faults";
import { queryInteger } from "../../platform/fields";
import { validate } from "../../platform/validation";

const armSchema = z.strictObject({ kind: z.enum(faultKinds), count: z.number().int().min(1).max(1000) });

/**
 * Local development's own routes, behind ADMIN_TOKEN, each only where its var turns it on (anywhere else every path
 * under it is a 404, as if it were not there); not part of the internal OpenAPI document, which describes what
 * production serves.
 * - Fault injection (`npm run soak`), where `FAULTS` is "on": `POST /faults {kind, count}` arms faults, `GET /faults`
 *   counts those armed and fired (src/platform/faults.ts).
 * - The mail outbox, where `MAIL_OUTBOX` is "on": `GET /outbox?to=<address>&limit=<n>` answers the newest mail the
 *   worker kept instead of sending (invitations, password resets), so the flows work offline.
 */
export function devApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/faults", onlyWhere("FAULTS"));
  app.use("/outbox", onlyWhere("MAIL_OUTBOX"));
  app.use("*", internalAuth("ADMIN_TOKEN"), jsonBody);
  app.get("/faults", (c) => c.json({ faults: faultCounts() }, 200));
  app.post("/faults", async (c) => {
    const { kind, count } = validate(armSchema, await c.req.json(), "json");
    armFault(kind, count);
    return c.json({ faults: faultCounts() }, 200);
  });
  app.get("/outbox", async (c) => {
    const { to, limit } = validate(outboxQuery, c.req.query(), "query");
    const mail = await outboxMail(c.get("ctx"), { to, limit });
    c.header("Cache-Control", "no-store");
    return c.json(
      {
        data: mail.map((row) => ({
          id: row.id,
          to: row.to,
          subject: row.subject,
          text: row.text,
          created_at: toIso(row.createdAt),
        })),
      },
      200,
    );
  });
  app.all("*", (c) => {
    throw new ApiError("not_found", `No route matches ${c.req.method} ${c.req.path}.`);
  });
  return app;
}

const outboxQuery = z.object({ to: z.string().max(254).optional(), limit: queryInteger(1, 100).default(20) });

function onlyWhere(name: "FAULTS" | "MAIL_OUTBOX") {
  return createMiddleware<AppEnv>(async (c, next) => {
    if ((c.env as unknown as Record<string, unknown>)[name] !== "on") {
      throw new ApiError("not_found", `No route matches ${c.req.method} ${c.req.path}.`);
    }
    await next();
  });
}
