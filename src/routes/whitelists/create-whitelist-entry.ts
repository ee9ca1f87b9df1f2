import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { whitelistSubuserIp } from "../../domain/whitelists/subuser-whitelists";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  presentWhitelistEntry,
  whitelistEntrySchema,
  whitelistIpSchema,
  whitelistLabelSchema,
} from "../../resources/whitelist";

const body = z
  .strictObject({
    subuser: idParam("subuser"),
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
  operationId: "createWhitelistEntry",
  method: "post",
  path: "/whitelists",
  tags: ["Whitelists"],
  boundKeys: true,
  summary: "Whitelist a source IP for a sub-user",
  description:
    "A whitelisted source IP may use the sub-user's product without a password. At most 50 entries per sub-user " +
    "per product; a block counts as one. The same IP may be whitelisted in many scopes.",
  request: { body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "invalid_cidr", "over_limit", "already_whitelisted"],
  responses: { 201: jsonContent(whitelistEntrySchema, "The new entry.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { subuser, ...input } = c.req.valid("json");
  const entry = await whitelistSubuserIp(c.get("ctx"), c.get("principal"), { ...input, subuserId: subuser });
  return c.json(presentWhitelistEntry(entry), 201);
};
