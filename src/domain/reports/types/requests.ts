import type { RequestSample } from "../../../durable-objects/traffic-store/contract";
import { accountStores } from "../../traffic/store";
import { keysetPages, PAGE_SIZE, type ReportKind } from "./scope";

/** `requests`: the sampled request log of the period (it keeps 48 hours, spec §8.5), oldest first. */
export const requestsReport: ReportKind = {
  columns: [
    { name: "request_id", type: "string" },
    { name: "ts", type: "timestamp" },
    { name: "product", type: "string" },
    { name: "subuser_id", type: "string" },
    { name: "method", type: "string" },
    { name: "target_host", type: "string" },
    { name: "status", type: "integer" },
    { name: "bytes", type: "integer" },
    { name: "exit_ip", type: "string" },
    { name: "exit_geo", type: "string" },
    { name: "exit_asn", type: "integer" },
    { name: "tag", type: "string", nullable: true },
  ],
  async *pages(ctx, scope) {
    const store = await accountStores(ctx, scope.accountId);
    yield* keysetPages<RequestSample>(
      (last) => store.reportRequestLog(scope, last && { ts: last.ts, requestId: last.requestId }, PAGE_SIZE),
      (row) => ({
        request_id: row.requestId,
        ts: row.ts,
        product: row.product,
        subuser_id: row.subuserId,
        method: row.method,
        target_host: row.targetHost,
        status: row.status,
        bytes: row.bytes,
        exit_ip: row.exitIp,
        exit_geo: row.exitGeo,
        exit_asn: row.exitAsn,
        tag: row.tag,
      }),
    );
  },
};
