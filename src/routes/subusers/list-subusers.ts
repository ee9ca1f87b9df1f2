import type { RouteHandler } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { products, subuserStatuses } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { listSubusers } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { presentSubuser, subuserSchema } from "../../schemas/subuser";

const query = paginationQuery.extend({
  product: z.enum(products).optional(),
  status: z.enum(subuserStatuses).optional(),
  label_contains: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, "must be 1-64 characters of a-z, 0-9 and -")
    .optional(),
});

export const route = apiRoute({
  method: "get",
  path: "/subusers",
  tags: ["Sub-users"],
  summary: "List sub-users",
  description: "Newest first. A key scoped to some products sees only sub-users whose products all lie in its scope.",
  request: { query },
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(subuserSchema), "A page of sub-users.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const filters = c.req.valid("query");
  const rows = await listSubusers(domainContext(c.env), c.var.principal, filters);
  return c.json(toPage(c, rows, filters.limit, presentSubuser), 200);
};
