import { and, eq, inArray } from "drizzle-orm";
import {
  type BatchRow,
  ispBatches,
  ispIps,
  type SubuserRow,
  subuserMonthlyUsage,
  subusers,
  whitelistEntries,
} from "../../db/schema";
import { type CapKind, periodsAt } from "../../platform/cap-periods";
import { now } from "../../platform/clock";
import { sha256Hex } from "../../platform/crypto";
import { type AccessState, accessRefusal } from "../../platform/gateway-rules";
import { blockContains, formatIp, parseBlock, parseIp } from "../../platform/ip";
import type { DomainContext } from "../context";
import { type GatewayDecision, refuse, refused } from "./decision";

const ISP_CACHE_TTL_S = 30;

/**
 * ISP IPs are used directly: user `{prefix}_{name}` of the batch's sub-user, password = the batch password
 * (or a source IP on the batch whitelist). Expired (grace), released and not yet provisioned IPs are refused.
 * ISP has no per-sub-user concurrency cap (per-IP only), so no lease is taken.
 */
export async function authorizeIspRequest(
  ctx: DomainContext,
  request: { username: string; password?: string | null; sourceIp: string; destIp: string },
): Promise<GatewayDecision> {
  const prefix = `${ctx.env.GATEWAY_USER_PREFIX}_`;
  const name = request.username.startsWith(prefix) ? request.username.slice(prefix.length) : "";
  const destIp = parseIp(request.destIp);
  if (!/^[a-z0-9]{1,32}$/.test(name) || !destIp) return refuse("bad-username");

  const row = await ctx.db
    .select({ ip: ispIps, batch: ispBatches, subuser: subusers })
    .from(ispIps)
    .innerJoin(ispBatches, eq(ispBatches.id, ispIps.batchId))
    .innerJoin(subusers, eq(subusers.id, ispBatches.subuserId))
    .where(eq(ispIps.ip, formatIp(destIp)))
    .get();
  // Sandbox IPs (simulated, 198.18.0.0/15) are never served by the proxy network.
  if (!row || row.batch.status === "released" || row.ip.sandbox) return refuse("ip-released");
  const { ip, batch, subuser } = row;

  if (subuser.name !== name) return refuse("auth-failed");
  const at = now();
  // The core's access rules, as every node runs them: the batch's passwords stand for the sub-user's here.
  const passwordHash = request.password ? await sha256Hex(request.password) : null;
  const whitelisted = passwordHash === null && (await batchWhitelisted(ctx, batch.id, request.sourceIp));
  const refusal = accessRefusal(
    await ispAccessState(ctx, subuser, batch, at),
    { product: "isp", passwordHash, whitelisted: () => whitelisted },
    at,
  );
  if (refusal) return refused(refusal);
  if (ip.status !== "assigned" || batch.status === "provisioning") return refuse("ip-provisioning");
  if (batch.status === "grace" || batch.expiresAt <= at) return refuse("ip-expired");

  return {
    allow: true,
    subuserId: subuser.id,
    product: "isp",
    lease: null,
    session: null,
    targetRules: subuser.targetRules,
    cacheTtlS: Math.max(0, Math.min(ISP_CACHE_TTL_S, Math.floor((batch.expiresAt - at) / 1000))),
    target: {
      type: "isp",
      ip: ip.ip,
      port: ip.port,
      batchId: batch.id,
      country: ip.country,
      city: ip.city,
      asn: ip.asn,
    },
  };
}

/**
 * An ISP sub-user's access state: the batch's password (and the one it replaced, until its end) as its passwords,
 * its caps reached or not by its settled usage (the figures the gates push for other products).
 */
async function ispAccessState(ctx: DomainContext, subuser: SubuserRow, batch: BatchRow, at: number) {
  const periods = periodsAt(at);
  const capped = [subuser.lifetimeLimitBytes, subuser.trafficLimitBytes, subuser.dailyLimitBytes].some(
    (cap) => cap !== null,
  );
  const rows = capped
    ? await ctx.db
        .select({ period: subuserMonthlyUsage.month, usedBytes: subuserMonthlyUsage.usedBytes })
        .from(subuserMonthlyUsage)
        .where(
          and(
            eq(subuserMonthlyUsage.subuserId, subuser.id),
            inArray(subuserMonthlyUsage.month, Object.values(periods)),
          ),
        )
    : [];
  const reached = (cap: number | null, kind: CapKind) =>
    cap !== null && (rows.find((row) => row.period === periods[kind])?.usedBytes ?? 0) >= cap;
  const state: AccessState = {
    status: subuser.deletedAt !== null ? "deleted" : subuser.status,
    products: ["isp"],
    passwords: [
      { sha256: batch.passwordHash, until: null },
      ...(batch.previousPasswordHash !== null
        ? [{ sha256: batch.previousPasswordHash, until: batch.previousPasswordUntil ?? 0 }]
        : []),
    ],
    exhausted: {},
    cap: { month: periods.month, reached: reached(subuser.trafficLimitBytes, "month") },
    dayCap: { day: periods.day, reached: reached(subuser.dailyLimitBytes, "day") },
    lifetimeCapReached: reached(subuser.lifetimeLimitBytes, "lifetime"),
    expiresAt: subuser.expiresAt,
  };
  return state;
}

async function batchWhitelisted(ctx: DomainContext, batchId: string, sourceIp: string): Promise<boolean> {
  const source = parseIp(sourceIp);
  if (!source) return false;
  const entries = await ctx.db
    .select({ ip: whitelistEntries.ip })
    .from(whitelistEntries)
    .where(and(eq(whitelistEntries.scope, "batch"), eq(whitelistEntries.scopeId, batchId)));
  return entries.some((entry) => {
    const parsed = parseBlock(entry.ip);
    return parsed.ok && blockContains(parsed.block, source);
  });
}
