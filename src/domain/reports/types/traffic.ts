import type { TrafficDayRow } from "../../../durable-objects/traffic-store/contract";
import { fractionOf } from "../../../platform/units";
import { accountStores } from "../../traffic/store";
import type { Column } from "../formats";
import { keysetPages, PAGE_SIZE, type ReportKind } from "./scope";

const MEASURES: Column[] = [
  { name: "bytes_in", type: "integer" },
  { name: "bytes_out", type: "integer" },
  { name: "requests", type: "integer" },
  { name: "errors", type: "integer" },
  { name: "error_rate", type: "number" },
];

/** Traffic per UTC day, product and `key` (`subuser_id` or `domain`), from the account's traffic store. */
function trafficDays(key: "subuser_id" | "domain"): ReportKind {
  return {
    columns: [
      { name: "day", type: "date" },
      { name: "product", type: "string" },
      { name: key, type: "string" },
      ...MEASURES,
    ],
    async *pages(ctx, scope) {
      const store = await accountStores(ctx, scope.accountId);
      yield* keysetPages<TrafficDayRow>(
        (last) => store.reportTrafficDays(scope, last, PAGE_SIZE),
        (row) => ({
          day: row.day,
          product: row.product,
          [key]: key === "domain" ? (row.domain ?? "") : row.subuserId,
          bytes_in: row.bytesIn,
          bytes_out: row.bytesOut,
          requests: row.requests,
          errors: row.errors,
          error_rate: fractionOf(row.errors, row.requests),
        }),
      );
    },
  };
}

/** `traffic`: bandwidth per UTC day, product and sub-user in the period. */
export const trafficReport: ReportKind = trafficDays("subuser_id");

/** `traffic` grouped by domain: per UTC day, product and target domain (`(other)` past the bound, as the API). */
export const trafficByDomainReport: ReportKind = trafficDays("domain");
