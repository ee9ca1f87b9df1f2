import { z } from "@hono/zod-openapi";
import { products, type WhitelistEntryRow } from "../db/schema";
import { toIso } from "../platform/clock";
import { id, text, timestamp, token } from "../platform/fields";

export const whitelistLabelSchema = text(64).trim().nullable().optional().openapi({ example: "office" });

const canonicalIp = token(/^[0-9a-f:./]+$/, 64).openapi({ example: "203.0.113.0/24" });

export const whitelistIpSchema = token(
  /^[0-9A-Fa-f:./]+$/,
  64,
  "must be an IPv4 or IPv6 address or CIDR block",
).openapi({
  description:
    "IPv4 address, IPv4 CIDR /24–/32, IPv6 address or IPv6 CIDR /64–/128. Stored in canonical form; an IPv4-mapped " +
    "IPv6 address or block is stored as the IPv4 one it maps.",
  example: "203.0.113.0/24",
});

export const whitelistEntrySchema = z
  .object({
    id: id("whitelist"),
    subuser: id("subuser"),
    product: z.enum(products),
    ip: canonicalIp,
    label: text(64).nullable(),
    created_at: timestamp(),
  })
  .openapi("WhitelistEntry");

export function presentWhitelistEntry(entry: WhitelistEntryRow): z.infer<typeof whitelistEntrySchema> {
  return {
    id: entry.id,
    subuser: entry.scopeId,
    product: entry.product,
    ip: entry.ip,
    label: entry.label,
    created_at: toIso(entry.createdAt),
  };
}

export const batchWhitelistEntrySchema = z
  .object({
    id: id("whitelist"),
    batch_id: id("batch"),
    ip: canonicalIp,
    label: text(64).nullable(),
    created_at: timestamp(),
  })
  .openapi("BatchWhitelistEntry");

export function presentBatchWhitelistEntry(entry: WhitelistEntryRow): z.infer<typeof batchWhitelistEntrySchema> {
  return {
    id: entry.id,
    batch_id: entry.scopeId,
    ip: entry.ip,
    label: entry.label,
    created_at: toIso(entry.createdAt),
  };
}
