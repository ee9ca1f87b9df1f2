import { and, eq, inArray } from "drizzle-orm";
import { ispBatches, ispIps, type SubuserRow, subuserMonthlyUsage, subusers, whitelistEntries } from "../../db/schema";
import { periodsAt } from "../../platform/cap-periods";
import { now } from "../../platform/clock";
import { sha256Hex, timingSafeEqual } from "../../platform/crypto";
import { blockContains, formatIp, parseBlock, parseIp } from "../../platform/ip";
import type { DomainContext } from "../context";
import { type GatewayDecision, refuse } from "./decision";

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

  if (subuser.name !== name || subuser.deletedAt !== null) return refuse("auth-failed");
  const at = now();
  if (request.password) {
    const hash = await sha256Hex(request.password);
    const current = await timingSafeEqual(hash, batch.passwordHash);
    const previous =
      batch.previousPasswordHash !== null &&
      (batch.previousPasswordUntil ?? 0) > at &&
      (await timingSafeEqual(hash, batch.previousPasswordHash));
    if (!current && !previous) return refuse("auth-failed");
  } else if (!(await batchWhitelisted(ctx, batch.id, request.sourceIp))) {
    return refuse("not-whitelisted");
  }
  if (subuser.status === "disabled") return refuse("subuser-disabled");
  if (subuser.expiresAt !== null && at >= subuser.expiresAt) return refuse("subuser-expired");
  const capReached = await reachedCap(ctx, subuser, at);
  if (capReached) return refuse(capReached);
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

/** The first of the sub-user's caps its settled usage has reached, in the rules' order (lifetime, month, day). */
async function reachedCap(ctx: DomainContext, subuser: SubuserRow, at: number) {
  const caps = [
    { cap: subuser.lifetimeLimitBytes, kind: "lifetime", code: "lifetime-limit-reached" },
    { cap: subuser.trafficLimitBytes, kind: "month", code: "traffic-limit-reached" },
    { cap: subuser.dailyLimitBytes, kind: "day", code: "daily-limit-reached" },
  ] as const;
  if (caps.every(({ cap }) => cap === null)) return null;
  const periods = periodsAt(at);
  const rows = await ctx.db
    .select({ period: subuserMonthlyUsage.month, usedBytes: subuserMonthlyUsage.usedBytes })
    .from(subuserMonthlyUsage)
    .where(
      and(eq(subuserMonthlyUsage.subuserId, subuser.id), inArray(subuserMonthlyUsage.month, Object.values(periods))),
    );
  const used = (period: string) => rows.find((row) => row.period === period)?.usedBytes ?? 0;
  return caps.find(({ cap, kind }) => cap !== null && used(periods[kind]) >= cap)?.code ?? null;
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
