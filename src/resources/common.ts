import { z } from "@hono/zod-openapi";
import { token } from "../platform/fields";

/** The response of every DELETE. */
export const deletedSchema = z
  .object({ id: token(/^[a-z]+_[0-9A-Za-z]+$/, 64), deleted: z.literal(true) })
  .openapi("Deleted", { example: { id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", deleted: true } });
