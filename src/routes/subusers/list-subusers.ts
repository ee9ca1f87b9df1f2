import { type RouteHandler, z } from "@hono/zod-openapi";
import { products, subuserStatuses } from "../../db/schema";
import { periodUsageOf } from "../../domain/subusers/cap-usage";
import { listSubusers } from "../../domain/subusers/subusers";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubuser, subuserSchema } from "../../resources/subuser";

const query = paginationQuery.extend({
  product: z.enum(products).optional(),
  status: z.enum(subuserStatuses).optional(),
  label_contains: token(/^[a-z0-9-]{1,64}$/, 64, "must be 1-64 characters of a-z, 0-9 and -").optional(),
  ids: token(/^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+){0,99}$/, 100 * 65, "must be 1-100 ids separated by commas")
    .transform((list) => [...new Set(list.split(","))])
    .optional()
    .openapi({
      description:
        "Only these sub-users: 1-100 ids separated by commas (a page of tables names each id it shows once). Ids " +
        "of no sub-user the key reaches are left out, as ids never issued.",
      example: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V,sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6W",
    }),
});

export const route = apiRoute({
  operationId: "listSubusers",
  method: "get",
  path: "/subusers",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "List sub-users",
  description: "Newest first. A key scoped to some products sees only sub-users whose products all lie in its scope.",
  request: { query },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(subuserSchema), "A page of sub-users.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { label_contains, ids, ...filters } = c.req.valid("query");
  const rows = await listSubusers(c.get("ctx"), c.get("principal"), {
    ...filters,
    labelContains: label_contains,
    ids,
  });
  const usage = await periodUsageOf(
    c.get("ctx"),
    c.get("principal").accountId,
    rows.map((row) => row.id),
  );
  return c.json(
    toPage(c, rows, filters.limit, (row) => presentSubuser(row, usage.get(row.id))),
    200,
  );
};
