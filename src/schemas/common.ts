import { z } from "@hono/zod-openapi";

/** The response of every DELETE. */
export const deletedSchema = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .openapi("Deleted", { example: { id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", deleted: true } });
