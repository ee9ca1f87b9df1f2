import { TrafficStoreClient } from "../../../durable-objects/traffic-store";
import type { TrafficDayRow } from "../../../durable-objects/traffic-store/contract";
import { errorRate, keysetPages, PAGE_SIZE, type ReportKind } from "./scope";

/** `traffic`: bandwidth per UTC day, product and sub-user in the period, from the account's traffic store. */
export const trafficReport: ReportKind = {
  columns: [
    { name: "day", type: "date" },
    { name: "product", type: "string" },
    { name: "subuser_id", type: "string" },
    { name: "bytes_in", type: "integer" },
    { name: "bytes_out", type: "integer" },
    { name: "requests", type: "integer" },
    { name: "errors", type: "integer" },
    { name: "error_rate", type: "number" },
  ],
  pages(ctx, scope) {
    const store = new TrafficStoreClient(ctx.env, scope.accountId);
    return keysetPages<TrafficDayRow>(
      (last) => store.reportTrafficDays(scope, last, PAGE_SIZE),
      (row) => ({
        day: row.day,
        product: row.product,
        subuser_id: row.subuserId,
        bytes_in: row.bytesIn,
        bytes_out: row.bytesOut,
        requests: row.requests,
        errors: row.errors,
        error_rate: errorRate(row.requests, row.errors),
      }),
    );
  },
};
