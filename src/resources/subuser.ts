import { z } from "@hono/zod-openapi";
import { products, type SubuserRow, subuserStatuses } from "../db/schema";
import { LIMIT_MAX, LIMIT_MIN } from "../domain/subusers/limits";
import { toIso } from "../platform/clock";
import { id, idParam, integer, list, timestamp, token } from "../platform/fields";

export const labelSchema = token(/^[a-z0-9-]{1,64}$/, 64, "must be 1-64 characters of a-z, 0-9 and -").openapi({
  example: "scraper-eu-1",
});

export const limitSchema = integer(LIMIT_MIN, LIMIT_MAX);

export const productListSchema = list(z.enum(products), products.length)
  .min(1)
  .refine((list) => new Set(list).size === list.length, "must not repeat a product")
  .openapi({ example: ["residential"] });

export const subuserIdParam = z.object({ id: idParam("subuser").openapi({ param: { name: "id", in: "path" } }) });

export const subuserSchema = z
  .object({
    id: id("subuser"),
    name: token(/^[a-z0-9]{1,32}$/, 32).openapi({
      description: "Generated gateway account name.",
      example: "s1a2b3c4d5e",
    }),
    label: labelSchema,
    products: list(z.enum(products), products.length),
    status: z.enum(subuserStatuses),
    concurrent_max: limitSchema,
    rps_max: limitSchema,
    created_at: timestamp(),
  })
  .openapi("Subuser");

export function presentSubuser(subuser: SubuserRow): z.infer<typeof subuserSchema> {
  return {
    id: subuser.id,
    name: subuser.name,
    label: subuser.label,
    products: subuser.products,
    status: subuser.status,
    concurrent_max: subuser.concurrentMax,
    rps_max: subuser.rpsMax,
    created_at: toIso(subuser.createdAt),
  };
}

/** A generated password: 32 base62 characters, shown once. */
export const passwordSchema = token(/^[0-9A-Za-z]{16,64}$/, 64);

export const subuserWithPasswordSchema = subuserSchema
  .extend({
    password: passwordSchema.openapi({
      description: "Shown only here; stored as a hash.",
      example: "q3XvLr8TmWc2Zp9AbN4sKd7HfJ1uYe6G",
    }),
  })
  .openapi("SubuserWithPassword");
