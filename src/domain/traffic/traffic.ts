import type { GroupBy, RequestSample, TrafficProduct, TrafficRow } from "../../durable-objects/traffic-store/contract";
import { DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import type { DomainContext, Principal } from "../context";
import { assertInScope, assertUnbound, subusersRead } from "../scope";
import { findAccountSubuser, subuserLabels } from "../subusers/subusers";
import { alignRange, MAX_RANGE_MS, resolutionFor } from "./resolution";
import { accountStores } from "./store";

/** What grouped rows can be ordered by, heaviest first: `bytes` is bytes in + out. */
export const TRAFFIC_ORDERS = ["requests", "bytes", "bytes_in", "bytes_out", "errors"] as const;
export type TrafficOrder = (typeof TRAFFIC_ORDERS)[number];
/** Grouped rows an answer may be limited to (a top table). */
export const MAX_TRAFFIC_ROWS = 1000;

export interface TrafficRequest {
  product: TrafficProduct;
  from: number;
  to: number;
  groupBy: GroupBy | null;
  subuserId?: string;
  region?: string;
  tag?: string;
  /** Grouped rows heaviest first by this metric (else in the grouping's own order). */
  orderBy?: TrafficOrder;
  /** Only the first this many grouped rows (after `orderBy`). */
  limit?: number;
  /** Rows grouped by sub-user carry its label (one D1 read of the ids answered). */
  labels?: boolean;
}

/** A grouped row, and the label of its sub-user when grouped by sub-user (null: none known). */
export type LabelledTrafficRow = TrafficRow & { label?: string | null };

/**
 * `ip` groups only ISP traffic (per static IP); `domain` groups by the registrable domain of the target host;
 * `status` and `error_code` by the outcome of the requests.
 */
export function groupsFor(product: TrafficProduct): GroupBy[] {
  const common: GroupBy[] = ["subuser", "region", "asn", "tag", "day", "hour", "domain", "status", "error_code"];
  return product === "isp" ? [...common, "ip"] : common;
}

const METRIC: Record<TrafficOrder, (row: TrafficRow) => number> = {
  requests: (row) => row.requests,
  bytes: (row) => row.bytesIn + row.bytesOut,
  bytes_in: (row) => row.bytesIn,
  bytes_out: (row) => row.bytesOut,
  errors: (row) => row.errors,
};

/**
 * The first `limit` rows, heaviest first by `orderBy` (without it, in the order given); rows of equal weight keep
 * the order given (the grouping's key order), so the same rows always give the same answer.
 */
export function topRows<Row extends TrafficRow>(rows: Row[], orderBy?: TrafficOrder, limit?: number): Row[] {
  const weight = orderBy && METRIC[orderBy];
  const ordered = weight ? rows.toSorted((a, b) => weight(b) - weight(a)) : rows;
  return limit === undefined ? ordered : ordered.slice(0, limit);
}

/**
 * Traffic of the caller's account over `[from, to)` (a bound key's: of its sub-users): exact sums of what was
 * ingested, at the resolution the age of `from` allows, the range widened to whole units of it.
 */
export async function queryTraffic(ctx: DomainContext, principal: Principal, request: TrafficRequest) {
  assertInScope(principal, [request.product]);
  if (request.from >= request.to) {
    const message = "from must be before to.";
    throw new ApiError("invalid_request", `from: ${message}`, { details: [{ field: "from", message }] });
  }
  if (request.to - request.from > MAX_RANGE_MS) {
    throw new ApiError("range_too_wide", undefined, {
      limit: {
        limit: MAX_RANGE_MS / DAY,
        current: Math.ceil((request.to - request.from) / DAY),
        raisedBy: "nothing: query in 90-day steps, or run a report for a longer period",
      },
    });
  }
  if (request.groupBy !== null && !groupsFor(request.product).includes(request.groupBy)) {
    throw new ApiError("invalid_group_by", `group_by must be one of ${groupsFor(request.product).join(", ")}.`);
  }
  if (request.groupBy === null && (request.orderBy !== undefined || request.limit !== undefined)) {
    const message = "order_by and limit need group_by (an ungrouped answer is one row).";
    throw new ApiError("invalid_request", message, { details: [{ field: "order_by", message }] });
  }
  if (request.groupBy === "domain" && [request.subuserId, request.region, request.tag].some((f) => f !== undefined)) {
    throw new ApiError("invalid_group_by", "group_by=domain does not combine with the subuser, region or tag filters.");
  }
  // The domains are summed over every sub-user of the account: no answer of them is confined to some.
  if (request.groupBy === "domain") assertUnbound(principal, "group_by=domain sums the traffic of every sub-user");
  if (request.subuserId !== undefined) await findAccountSubuser(ctx, principal, request.subuserId);
  const at = now();
  const resolution = resolutionFor(request.from, at);
  const range = alignRange(request.from, request.to, resolution);
  const grouped: TrafficRow[] = await (await accountStores(ctx, principal.accountId)).traffic({
    product: request.product,
    ...range,
    resolution,
    groupBy: request.groupBy,
    filters: { subuserIds: subusersRead(principal, request.subuserId), region: request.region, tag: request.tag },
  });
  const rows: LabelledTrafficRow[] = topRows(grouped, request.orderBy, request.limit);
  if (request.groupBy === "subuser" && request.labels) {
    const labels = await subuserLabels(
      ctx,
      principal.accountId,
      rows.map((row) => String(row.key)),
    );
    for (const row of rows) row.label = labels.get(String(row.key)) ?? null;
  }
  return { ...range, resolution, rows };
}

/**
 * The sampled request log of a product: newest first, at most 1,000, none older than 48 hours (a bound key's: of
 * its sub-users).
 */
export async function listRequests(
  ctx: DomainContext,
  principal: Principal,
  query: { product: TrafficProduct; subuserId?: string; limit: number },
): Promise<RequestSample[]> {
  assertInScope(principal, [query.product]);
  if (query.subuserId !== undefined) await findAccountSubuser(ctx, principal, query.subuserId);
  const subuserIds = subusersRead(principal, query.subuserId);
  return (await accountStores(ctx, principal.accountId)).requests({
    product: query.product,
    subuserIds,
    limit: query.limit,
  });
}
