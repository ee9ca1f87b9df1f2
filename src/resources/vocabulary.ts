import { z } from "@hono/zod-openapi";
import { list } from "../platform/fields";
import { bandwidthProducts, products } from "../vocabulary";

/** The product vocabulary as the API's schemas validate and document it (one zod enum per word list). */
export const productSchema = z.enum(products);

export const bandwidthProductSchema = z.enum(bandwidthProducts);

/** A non-empty set of products (a sub-user's products, a key's scope, a report's filter). */
export const productListSchema = list(productSchema, products.length)
  .min(1)
  .refine((values) => new Set(values).size === values.length, "must not repeat a product")
  .openapi({ example: ["residential"] });
