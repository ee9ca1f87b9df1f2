import { sql } from "drizzle-orm";
import { fractionOf } from "../../../platform/units";
import type { DomainContext } from "../../context";
import { accountStores } from "../../traffic/store";
import type { Row } from "../formats";
import { PAGE_SIZE, type ReportKind, type RunScope } from "./scope";

interface BatchIp {
  batch_id: string;
  subuser_id: string;
  status: string;
  country: string;
  city: string | null;
  asn: number;
  expires_at: number;
  ip: string;
  port: number;
  carrier: string;
}

/** ISP pages are smaller: each costs one health lookup in the traffic store for its IPs. */
const IP_PAGE_SIZE = Math.min(PAGE_SIZE, 1_000);

/**
 * `isp_batches`: every IP of the account's batches (released ones excluded) with its health in the period from the
 * traffic data: requests, error rate and the last time it carried traffic. Applies when `filters.products` is
 * absent or holds `isp`; `filters.subusers` keeps the batches of those sub-users.
 */
export const ispBatchesReport: ReportKind = {
  columns: [
    { name: "batch_id", type: "string" },
    { name: "subuser_id", type: "string" },
    { name: "batch_status", type: "string" },
    { name: "country", type: "string" },
    { name: "city", type: "string", nullable: true },
    { name: "asn", type: "integer" },
    { name: "expires_at", type: "timestamp" },
    { name: "ip", type: "string" },
    { name: "port", type: "integer" },
    { name: "carrier", type: "string" },
    { name: "requests", type: "integer" },
    { name: "errors", type: "integer" },
    { name: "error_rate", type: "number" },
    { name: "last_seen_at", type: "timestamp", nullable: true },
  ],
  pages: batchIpPages,
};

async function* batchIpPages(ctx: DomainContext, scope: RunScope): AsyncIterable<Row[]> {
  if (scope.products && !scope.products.includes("isp")) return;
  const store = await accountStores(ctx, scope.accountId);
  const subuserFilter = scope.subuserIds
    ? sql`AND b.subuser_id IN (SELECT value FROM json_each(${JSON.stringify(scope.subuserIds)}))`
    : sql``;
  let last: BatchIp | null = null;
  for (;;) {
    const page: BatchIp[] = await ctx.db.all<BatchIp>(sql`
      SELECT b.id AS batch_id, b.subuser_id, b.status, b.country, b.city, b.asn, b.expires_at, i.ip, i.port, i.carrier
      FROM isp_batches b JOIN isp_ips i ON i.batch_id = b.id
      WHERE b.account_id = ${scope.accountId} AND b.status <> 'released' ${subuserFilter}
        AND (b.id, i.ip) > (${last?.batch_id ?? ""}, ${last?.ip ?? ""})
      ORDER BY b.id, i.ip LIMIT ${IP_PAGE_SIZE}`);
    if (page.length === 0) return;
    const health = new Map(
      (
        await store.reportIpHealth(
          page.map((row) => row.ip),
          scope.from,
          scope.to,
        )
      ).map((h) => [h.ip, h]),
    );
    yield page.map((row) => {
      const ip = health.get(row.ip);
      const requests = ip?.requests ?? 0;
      const errors = ip?.errors ?? 0;
      return {
        batch_id: row.batch_id,
        subuser_id: row.subuser_id,
        batch_status: row.status,
        country: row.country,
        city: row.city,
        asn: row.asn,
        expires_at: row.expires_at,
        ip: row.ip,
        port: row.port,
        carrier: row.carrier,
        requests,
        errors,
        error_rate: fractionOf(errors, requests),
        last_seen_at: ip?.lastSeenAt ?? null,
      };
    });
    if (page.length < IP_PAGE_SIZE) return;
    last = page[page.length - 1] as BatchIp;
  }
}
