import { z } from "@hono/zod-openapi";
import { products, type WhitelistEntryRow } from "../db/schema";
import { toIso } from "../platform/clock";

export const whitelistLabelSchema = z.string().trim().max(64).nullable().optional().openapi({ example: "office" });

export const whitelistIpSchema = z.string().min(1).max(64).openapi({
  description: "IPv4 address, IPv4 CIDR /24–/32, IPv6 address or IPv6 CIDR /64–/128. Stored in canonical form.",
  example: "203.0.113.0/24",
});

export const whitelistEntrySchema = z
  .object({
    id: z.string().openapi({ example: "wl_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    subuser: z.string().openapi({ example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    product: z.enum(products),
    ip: z.string().openapi({ example: "203.0.113.0/24" }),
    label: z.string().nullable(),
    created_at: z.iso.datetime(),
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
    id: z.string().openapi({ example: "wl_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    batch_id: z.string().openapi({ example: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    ip: z.string().openapi({ example: "203.0.113.0/24" }),
    label: z.string().nullable(),
    created_at: z.iso.datetime(),
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
