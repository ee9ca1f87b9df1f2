import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { whitelistSubuserIp } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import {
  presentWhitelistEntry,
  whitelistEntrySchema,
  whitelistIpSchema,
  whitelistLabelSchema,
} from "../../schemas/whitelist";

const body = z
  .strictObject({
    subuser: z.string().min(1),
    product: z.enum(products),
    ip: whitelistIpSchema,
    label: whitelistLabelSchema,
  })
  .openapi("WhitelistEntryCreate", {
    example: {
      subuser: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
      product: "residential",
      ip: "203.0.113.0/24",
      label: "office",
    },
  });

export const route = apiRoute({
  method: "post",
  path: "/whitelists",
  tags: ["Whitelists"],
  summary: "Whitelist a source IP for a sub-user",
  description:
    "A whitelisted source IP may use the sub-user's product without a password. At most 50 entries per sub-user " +
    "per product; a block counts as one. The same IP may be whitelisted in many scopes.",
  request: { body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "invalid_cidr", "over_limit", "already_whitelisted"],
  responses: { 201: jsonContent(whitelistEntrySchema, "The new entry.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const entry = await whitelistSubuserIp(domainContext(c.env), c.var.principal, c.req.valid("json"));
  return c.json(presentWhitelistEntry(entry), 201);
};
