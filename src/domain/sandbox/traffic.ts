import { and, asc, eq } from "drizzle-orm";
import { ispBatches, ispIps, type Product, type SubuserRow } from "../../db/schema";
import { DAY, now, toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import type { BandwidthProduct } from "../../vocabulary";
import type { DomainContext, Principal } from "../context";
import { buildUsername, ispUsername, typeOf } from "../gateway/username";
import { findSubuser } from "../subusers/subusers";
import { ingestUsageBatch } from "../traffic/ingest";
import { MAX_RECORDS_PER_BATCH, type UsageRecord } from "../traffic/usage-records";
import { assertSandbox } from "./twins";

/**
 * Synthetic traffic for the sandbox: usage records as the gateway would report them, sent through the real
 * ingestion path (`ingestUsageBatch`: the usage queue, pools, caps, traffic, the request log, sessions), so they
 * show up exactly like real usage. Everything is deterministic: exits come from TEST-NET-3 (203.0.113.0/24) and
 * ASNs from the documentation range (RFC 5398), errors are spread evenly at the asked rate.
 */

export const MAX_TEST_REQUESTS = 10_000;
/** Bytes from the target per request (the rest are bytes sent to it). */
const BYTES_IN_SHARE = 0.9;
const DOCUMENTATION_ASN = 64_496;
/** Target hosts, cycled: reserved names (RFC 2606) of two registrable domains, for `group_by=domain`. */
const TARGET_HOSTS = ["sandbox.example", "www.sandbox.example", "api.sandbox-shop.example"] as const;

export interface TrafficSpec {
  /** The full gateway usernames to report under (a session's username pins its session), cycled. */
  usernames: string[];
  product: Product;
  requests: number;
  from: number;
  to: number;
  regions: string[];
  tags: string[];
  errorRate: number;
  bytesPerRequest: number;
  /** ISP: the batch IPs addressed, cycled (also the exits). */
  destIps: string[];
  /** Exits to report instead of the generated ones, cycled (a sticky session's exit). */
  exitIps?: string[];
  /**
   * A sticky session's records: the generation of its key (`session_gen`, as a gateway node reports it: the account's
   * store names the session from the key, the generation and the first record's time) and the id that gives
   * (`session`: how a usage route of the release before generations names it; `session_gen` takes precedence).
   */
  sessionGen?: number;
  session?: string;
}

const pick = <T>(list: readonly T[], index: number): T => list[index % list.length] as T;

/** The sandbox's exits: TEST-NET-3 (RFC 5737) .1–.254, for every product; sticky sessions pick theirs from it. */
export const SANDBOX_EXITS: readonly string[] = Array.from({ length: 254 }, (_, i) => `203.0.113.${i + 1}`);

/** The exit of the i-th request: a TEST-NET-3 address that depends only on the region and the index. */
export function simulatedExitIp(region: string, index: number): string {
  const seed = region.charCodeAt(0) * 31 + region.charCodeAt(1) + index * 7;
  return `203.0.113.${1 + (seed % 254)}`;
}

/**
 * Whether the i-th request fails: evenly spread at `rate` within each region's own sequence (the regions are
 * cycled), so every region shows the rate rather than the failures aliasing onto one of them.
 */
function fails(i: number, regions: number, rate: number): boolean {
  const k = Math.floor(i / regions);
  return Math.floor((k + 1) * rate) > Math.floor(k * rate);
}

/** The `requests` records of a spec, timestamps spread evenly over [from, to). */
export function syntheticRecords(spec: TrafficSpec): UsageRecord[] {
  const span = Math.max(0, spec.to - spec.from);
  const bytesIn = Math.round(spec.bytesPerRequest * BYTES_IN_SHARE);
  return Array.from({ length: spec.requests }, (_, i) => {
    const region = pick(spec.regions, i);
    const failed = fails(i, spec.regions.length, spec.errorRate);
    const ts = spec.from + Math.floor((span * i) / spec.requests);
    const destIp = spec.product === "isp" ? pick(spec.destIps, i) : null;
    return {
      request_id: newId("request", ts),
      ts: toIso(ts),
      product: spec.product,
      username: pick(spec.usernames, i),
      dest_ip: destIp,
      method: "GET",
      target_host: pick(TARGET_HOSTS, i),
      status: failed ? 502 : 200,
      bytes_in: bytesIn,
      bytes_out: spec.bytesPerRequest - bytesIn,
      exit_ip: destIp ?? (spec.exitIps ? pick(spec.exitIps, i) : simulatedExitIp(region, i)),
      exit_geo: `${region}//`,
      exit_asn: DOCUMENTATION_ASN + (spec.regions.indexOf(region) % 16),
      carrier_name: spec.product === "mobile" ? "Sandbox Mobile" : null,
      tag: spec.tags.length > 0 ? pick(spec.tags, i) : null,
      error_code: failed ? "upstream-error" : null,
      repinned: false,
      ...(spec.session === undefined ? {} : { session: spec.session }),
      ...(spec.sessionGen === undefined ? {} : { session_gen: spec.sessionGen }),
    };
  });
}

/** Reports the records in batches of the gateway's size; what the ingestion accepted. */
export async function reportSyntheticUsage(ctx: DomainContext, records: UsageRecord[]): Promise<number> {
  let accepted = 0;
  for (let start = 0; start < records.length; start += MAX_RECORDS_PER_BATCH) {
    const batch = {
      batch_id: `sandbox-${crypto.randomUUID()}`,
      records: records.slice(start, start + MAX_RECORDS_PER_BATCH),
    };
    accepted += (await ingestUsageBatch(ctx, batch)).accepted;
  }
  return accepted;
}

export interface TrafficRequest {
  subuserId: string;
  product?: Product;
  requests: number;
  from?: number;
  to?: number;
  regions?: string[];
  tags?: string[];
  errorRate?: number;
  bytesPerRequest?: number;
}

export const DEFAULT_WINDOW_MS = 60 * 60_000;
/** How far back generated traffic may go: the longest traffic range (spec §8.5). */
const MAX_AGE_MS = 90 * DAY;
export const DEFAULT_BYTES_PER_REQUEST = 50_000;

/** Generates a sub-user's traffic (sandbox keys only) through the real ingestion path. */
export async function generateTraffic(ctx: DomainContext, principal: Principal, input: TrafficRequest) {
  assertSandbox(principal);
  const subuser = await findSubuser(ctx, principal, input.subuserId);
  const product = input.product ?? (subuser.products[0] as Product);
  if (!subuser.products.includes(product)) {
    const message = `product: the sub-user has no ${product} access.`;
    throw new ApiError("invalid_request", message, { details: [{ field: "product", message }] });
  }
  const regions = input.regions?.length ? input.regions : ["us"];
  const spec: TrafficSpec = {
    // One username per region, cycled in step with the regions, so each record's geo matches its username.
    usernames:
      product === "isp"
        ? [ispUsername(ctx.env.GATEWAY_USER_PREFIX, subuser.name)]
        : regions.map((r) => gatewayUsername(ctx, subuser, product, r)),
    product,
    requests: input.requests,
    ...trafficWindow(input),
    regions,
    tags: input.tags ?? [],
    errorRate: input.errorRate ?? 0,
    bytesPerRequest: input.bytesPerRequest ?? DEFAULT_BYTES_PER_REQUEST,
    destIps: product === "isp" ? await assignedIps(ctx, subuser) : [],
  };
  const records = syntheticRecords(spec);
  const accepted = await reportSyntheticUsage(ctx, records);
  const errors = records.filter((record) => record.error_code !== null).length;
  return { subuser, spec, accepted, errors };
}

/** `to` defaults to now and `from` to an hour before it; the window must lie in the last 90 days. */
function trafficWindow(input: { from?: number; to?: number }): { from: number; to: number } {
  const at = now();
  const to = input.to ?? at;
  const from = input.from ?? to - DEFAULT_WINDOW_MS;
  if (from >= to || to > at || from < at - MAX_AGE_MS) {
    const message = "from must be before to, within the last 90 days, and to not in the future.";
    throw new ApiError("invalid_request", message, { details: [{ field: "from", message }] });
  }
  return { from, to };
}

function gatewayUsername(ctx: DomainContext, subuser: SubuserRow, product: BandwidthProduct, region: string): string {
  return buildUsername(ctx.env.GATEWAY_USER_PREFIX, subuser.name, {
    type: typeOf(product),
    region,
    state: null,
    city: null,
    asn: null,
    sessionId: null,
    sesstime: null,
  });
}

/** The IPs of the sub-user's live ISP batches; none is a conflict (nothing to address). */
async function assignedIps(ctx: DomainContext, subuser: SubuserRow): Promise<string[]> {
  const rows = await ctx.db
    .select({ ip: ispIps.ip })
    .from(ispIps)
    .innerJoin(ispBatches, eq(ispBatches.id, ispIps.batchId))
    .where(and(eq(ispBatches.subuserId, subuser.id), eq(ispBatches.status, "active")))
    .orderBy(asc(ispIps.ip))
    .limit(1000);
  if (rows.length === 0) {
    throw new ApiError("gateway_refused", "The sub-user has no active ISP batch: there is no IP to address.");
  }
  return rows.map((row) => row.ip);
}
