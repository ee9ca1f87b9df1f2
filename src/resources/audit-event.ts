import { z } from "@hono/zod-openapi";
import type { AuditEventRow } from "../db/schema";
import { auditActions, auditResourceTypes } from "../domain/audit/audit-log";
import { toIso } from "../platform/clock";
import { email, id, instant, ipText, text, timestamp, token } from "../platform/fields";
import { paginationQuery } from "../platform/pagination";
import { productListSchema } from "./vocabulary";

const ANY_ID = /^[a-z]{2,4}_[0-9A-HJKMNP-TV-Z]{26}$/;
const actorKey = z
  .union([id("apiKey"), z.literal("admin")])
  .openapi({ description: "The acting API key's id, or `admin` for an operator through the admin API." });
const fieldValues = z
  .record(z.string().max(64), z.unknown())
  .nullable()
  .openapi({ description: "By field name; secrets appear as `[redacted]`, times as ISO 8601, money in minor units." });

export const auditEventSchema = z
  .object({
    id: id("auditEvent"),
    created_at: timestamp(),
    action: z.enum(auditActions).openapi({ description: "`resource_type.verb`." }),
    resource_type: z.enum(auditResourceTypes),
    resource_id: token(ANY_ID, 31).openapi({ example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    products: productListSchema
      .nullable()
      .openapi({ description: "The products the resource belongs to; null = account-wide." }),
    actor_key: actorKey.nullable().openapi({
      description:
        "The acting API key's id, `admin` for an operator through the admin API, or null when a member acted " +
        "signed in (without a key; `actor_member` names them).",
    }),
    actor_member: z
      .object({ id: id("member"), email: email() })
      .nullable()
      .openapi({
        description: "The person who acted, signed in (their email as it was then); null when a key acted alone.",
      }),
    actor_client: z
      .object({ id: text(200, 1), name: text(200) })
      .nullable()
      .openapi({
        description:
          "The OAuth client (an AI assistant on the MCP server) the member acted through: its id and the name it " +
          "registered (not verified); null otherwise.",
      }),
    source_ip: ipText().nullable().openapi({ description: "The caller's address as the edge saw it." }),
    request_id: token(/^req_[0-9A-Za-z]{1,60}$/, 64).openapi({ description: "The `X-Request-Id` of the call." }),
    changes: fieldValues.openapi({ description: "The changed fields' new values (a creation: the fields set)." }),
    previous: fieldValues.openapi({ description: "The changed fields' values before (updates and deletions)." }),
  })
  .openapi("AuditEvent");

export const auditEventQuery = paginationQuery.extend({
  resource: z
    .union([z.enum(auditResourceTypes), token(ANY_ID, 31)])
    .optional()
    .openapi({ description: "A resource id (`sub_…`), or a resource type (`subuser`): only its entries." }),
  actor_key: actorKey.optional(),
  actor_member: id("member").optional().openapi({ description: "A member's id: only what that person did." }),
  action: z.enum(auditActions).optional(),
  from: instant().optional().openapi({ description: "Entries made at or after this instant." }),
  to: instant().optional().openapi({ description: "Entries made before this instant." }),
});

export function presentAuditEvent(row: AuditEventRow): z.infer<typeof auditEventSchema> {
  return {
    id: row.id,
    created_at: toIso(row.createdAt),
    action: row.action as z.infer<typeof auditEventSchema>["action"],
    resource_type: row.resourceType as z.infer<typeof auditEventSchema>["resource_type"],
    resource_id: row.resourceId,
    products: row.products,
    actor_key: row.actorKeyId ?? (row.actorMemberId ? null : "admin"),
    actor_member: row.actorMemberId ? { id: row.actorMemberId, email: row.actorMemberEmail ?? "" } : null,
    actor_client: row.actorClientId ? { id: row.actorClientId, name: row.actorClientName ?? "" } : null,
    source_ip: row.sourceIp,
    request_id: row.requestId,
    changes: row.changes,
    previous: row.previous,
  };
}
