import { z } from "@hono/zod-openapi";
import { products, type SubuserRow, subuserStatuses } from "../db/schema";
import { LIMIT_MAX, LIMIT_MIN } from "../domain/subusers/limits";
import { toIso } from "../platform/clock";

export const labelSchema = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, "must be 1-64 characters of a-z, 0-9 and -")
  .openapi({ example: "scraper-eu-1" });

export const limitSchema = z.number().int().min(LIMIT_MIN).max(LIMIT_MAX);

export const productListSchema = z
  .array(z.enum(products))
  .min(1)
  .refine((list) => new Set(list).size === list.length, "must not repeat a product")
  .openapi({ example: ["residential"] });

export const subuserIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
});

export const subuserSchema = z
  .object({
    id: z.string().openapi({ example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    name: z.string().openapi({ description: "Generated gateway account name.", example: "s1a2b3c4d5e" }),
    label: z.string(),
    products: z.array(z.enum(products)),
    status: z.enum(subuserStatuses),
    concurrent_max: z.number().int(),
    rps_max: z.number().int(),
    created_at: z.iso.datetime(),
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

export const subuserWithPasswordSchema = subuserSchema
  .extend({
    password: z.string().openapi({ description: "Shown only here; stored as a hash.", example: "q3Xv…" }),
  })
  .openapi("SubuserWithPassword");
