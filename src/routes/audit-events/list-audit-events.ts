import type { RouteHandler } from "@hono/zod-openapi";
import { listAuditEvents } from "../../domain/audit/audit-log";
import type { AppEnv } from "../../env";
import { pageSchema, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { auditEventQuery, auditEventSchema, presentAuditEvent } from "../../resources/audit-event";

export const route = apiRoute({
  operationId: "listAuditEvents",
  method: "get",
  path: "/audit-events",
  tags: ["Audit log"],
  summary: "List audit events",
  description:
    "Every change made through the API or by an operator — who (key or `admin`), from where, in which request, " +
    "to what, and which fields changed (never a secret's value) — newest first, kept one year. Each entry is " +
    "written in the same transaction as the change it records. A product-scoped key sees the account-wide " +
    "entries and those of its products, not those of what only a key without a product scope may read (the " +
    "budget, reports, webhooks). Changes the platform makes itself (renewals, expiries) are events.",
  request: { query: auditEventQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(auditEventSchema), "A page of audit events.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listAuditEvents(c.get("ctx"), c.get("principal"), {
    ...query,
    actorKey: query.actor_key,
    actorMember: query.actor_member,
  });
  return c.json(toPage(c, rows, query.limit, presentAuditEvent), 200);
};
