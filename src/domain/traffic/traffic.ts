import type { GroupBy, RequestSample, TrafficProduct, TrafficRow } from "../../durable-objects/traffic-store/contract";
import { DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import type { DomainContext, Principal } from "../context";
import { assertInScope, assertUnbound, subusersRead } from "../scope";
import { findAccountSubuser } from "../subusers/subusers";
import { alignRange, MAX_RANGE_MS, resolutionFor } from "./resolution";
import { accountStores } from "./store";

export interface TrafficRequest {
  product: TrafficProduct;
  from: number;
  to: number;
  groupBy: GroupBy | null;
  subuserId?: string;
  region?: string;
  tag?: string;
}

/** `ip` groups only ISP traffic (per static IP); `domain` groups by the registrable domain of the target host. */
export function groupsFor(product: TrafficProduct): GroupBy[] {
  const common: GroupBy[] = ["subuser", "region", "asn", "tag", "day", "hour", "domain"];
  return product === "isp" ? [...common, "ip"] : common;
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
  if (request.groupBy === "domain" && [request.subuserId, request.region, request.tag].some((f) => f !== undefined)) {
    throw new ApiError("invalid_group_by", "group_by=domain does not combine with the subuser, region or tag filters.");
  }
  // The domains are summed over every sub-user of the account: no answer of them is confined to some.
  if (request.groupBy === "domain") assertUnbound(principal, "group_by=domain sums the traffic of every sub-user");
  if (request.subuserId !== undefined) await findAccountSubuser(ctx, principal, request.subuserId);
  const at = now();
  const resolution = resolutionFor(request.from, at);
  const range = alignRange(request.from, request.to, resolution);
  const rows: TrafficRow[] = await (await accountStores(ctx, principal.accountId)).traffic({
    product: request.product,
    ...range,
    resolution,
    groupBy: request.groupBy,
    filters: { subuserIds: subusersRead(principal, request.subuserId), region: request.region, tag: request.tag },
  });
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
