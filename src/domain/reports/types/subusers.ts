import { sql } from "drizzle-orm";
import { bytesToGb } from "../../../platform/units";
import { keysetPages, PAGE_SIZE, type ReportKind } from "./scope";

interface SubuserLine {
  id: string;
  label: string;
  name: string;
  products: string;
  status: string;
  concurrent_max: number;
  rps_max: number;
  traffic_limit_bytes: number | null;
  created_at: number;
}

/**
 * `subusers`: the sub-user inventory as it stands when the run executes (a snapshot: the period does not apply).
 * `filters.products` keeps sub-users with any of those products; `filters.subusers` keeps those ids.
 */
export const subusersReport: ReportKind = {
  columns: [
    { name: "id", type: "string" },
    { name: "label", type: "string" },
    { name: "name", type: "string" },
    { name: "products", type: "string" },
    { name: "status", type: "string" },
    { name: "concurrent_max", type: "integer" },
    { name: "rps_max", type: "integer" },
    { name: "traffic_limit_gb", type: "number", nullable: true },
    { name: "created_at", type: "timestamp" },
  ],
  pages(ctx, scope) {
    const productFilter = scope.products
      ? sql`AND EXISTS (SELECT 1 FROM json_each(products) p WHERE p.value IN (SELECT value FROM json_each(${JSON.stringify(scope.products)})))`
      : sql``;
    const idFilter = scope.subuserIds
      ? sql`AND id IN (SELECT value FROM json_each(${JSON.stringify(scope.subuserIds)}))`
      : sql``;
    return keysetPages<SubuserLine>(
      (last) =>
        ctx.db.all<SubuserLine>(sql`
          SELECT id, label, name, products, status, concurrent_max, rps_max, traffic_limit_bytes, created_at
          FROM subusers
          WHERE account_id = ${scope.accountId} AND deleted_at IS NULL AND id > ${last?.id ?? ""}
            ${productFilter} ${idFilter}
          ORDER BY id LIMIT ${PAGE_SIZE}`),
      (line) => ({
        id: line.id,
        label: line.label,
        name: line.name,
        products: (JSON.parse(line.products) as string[]).join(" "),
        status: line.status,
        concurrent_max: line.concurrent_max,
        rps_max: line.rps_max,
        traffic_limit_gb: line.traffic_limit_bytes === null ? null : bytesToGb(line.traffic_limit_bytes),
        created_at: line.created_at,
      }),
    );
  },
};
