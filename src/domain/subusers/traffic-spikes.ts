import { and, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import {
  type SpikeSettingValue,
  type SubuserRow,
  subusers,
  subuserTrafficSpikes,
  type TrafficSpikeRow,
} from "../../db/schema";
import type { TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { HourlyRate, SpikeAlert, SpikeAlertReceipt } from "../../durable-objects/traffic-store/contract";
import { HOUR, now, SECOND, toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { bytesToGb } from "../../platform/units";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { eventStatement, eventTypes } from "../events";
import { productsInScope, subusersReached } from "../scope";
import { targetDomain } from "../traffic/target-domain";
import { commit, runUnitOfWork, type Step } from "../unit-of-work";
import { syncGate } from "./gate-sync";
import { findSubuser } from "./subusers";

const DOMAINS_NAMED = 5;
const ALERTS_PER_WRITE = 40;

/**
 * Records the spike alerts of one of the account's stores and confirms them back to it (as `announceNewSources`
 * does for new sources). A start is recorded as an episode and one `subuser.traffic_spike` event (its id is the
 * dedupe key), unless D1 says the sub-user is off; a store that judged at another setting than D1's is told again.
 * The sub-user's action, if any, is taken in the same unit of work (disable, or cap at its baseline), never again
 * once acknowledged. An end closes the episode and records `subuser.traffic_spike_ended`. An alert that fails to
 * record stays in the store's outbox.
 */
export async function announceTrafficSpikes(
  ctx: DomainContext,
  accountId: string,
  alerts: SpikeAlert[],
  store: TrafficStoreClient,
): Promise<void> {
  // D1 binds at most 100 values a statement: a few dozen alerts at a time.
  for (let i = 0; i < alerts.length; i += ALERTS_PER_WRITE) {
    await announceSome(ctx, accountId, alerts.slice(i, i + ALERTS_PER_WRITE), store);
  }
}

async function announceSome(
  ctx: DomainContext,
  accountId: string,
  alerts: SpikeAlert[],
  store: TrafficStoreClient,
): Promise<void> {
  const ids = [...new Set(alerts.map((alert) => alert.subuserId))];
  const [owners, known] = await ctx.db.batch([
    ctx.db
      .select()
      .from(subusers)
      .where(and(eq(subusers.accountId, accountId), inArray(subusers.id, ids), isNull(subusers.deletedAt))),
    ctx.db
      .select({ id: subuserTrafficSpikes.id })
      .from(subuserTrafficSpikes)
      .where(
        inArray(
          subuserTrafficSpikes.id,
          alerts.map((alert) => alert.spikeId),
        ),
      ),
  ]);
  const byId = new Map(owners.map((row) => [row.id, row]));
  const recorded = new Set(known.map((row) => row.id));
  const steps: Step[] = [];
  const acted = new Set<string>();
  // A store that judged at another setting than D1 holds missed a push: it is told again.
  const resync = new Map<string, SpikeSettingValue>();
  for (const alert of alerts) {
    const subuser = byId.get(alert.subuserId);
    if (!subuser) continue;
    if (alert.kind === "ended") {
      if (recorded.has(alert.spikeId)) steps.push(...spikeEnded(ctx, accountId, alert));
      continue;
    }
    if (subuser.spikeSensitivity !== alert.sensitivity) resync.set(subuser.id, subuser.spikeSensitivity);
    if (subuser.spikeSensitivity === "off") continue;
    steps.push(...spikeStarted(ctx, subuser, alert));
    recorded.add(alert.spikeId);
    if (subuser.spikeAction !== "none") acted.add(subuser.name);
  }
  if (steps.length > 0) await runUnitOfWork(ctx, steps);
  await Promise.all([...acted].map((name) => syncGate(ctx, name)));
  await store.confirmSpikeAlerts(alerts.map(({ spikeId, kind }): SpikeAlertReceipt => ({ spikeId, kind })));
  await Promise.all([...resync].map(([id, setting]) => store.configureSpikes(id, setting)));
}

/** The episode, its event and the sub-user's action (taken only while the episode is not acknowledged). */
function spikeStarted(ctx: DomainContext, subuser: SubuserRow, alert: SpikeAlert): Step[] {
  const action = subuser.spikeAction;
  const capRps = action === "cap" ? baselineRps(alert) : null;
  const payload = {
    spike: alert.spikeId,
    subuser: subuser.id,
    sensitivity: alert.sensitivity,
    started_at: toIso(alert.startedAt),
    detected_at: toIso(alert.at),
    observed: rateFigures(alert.observed),
    baseline: { ...rateFigures(alert.baseline), weeks: alert.baseline.weeks, days: alert.baseline.days },
    ...episodeSamples(alert),
    action,
    ...(capRps === null ? {} : { cap_rps: capRps }),
  };
  const steps: Step[] = [
    ctx.db
      .insert(subuserTrafficSpikes)
      .values({
        id: alert.spikeId,
        accountId: subuser.accountId,
        subuserId: subuser.id,
        sensitivity: alert.sensitivity,
        startedAt: alert.startedAt,
        detectedAt: alert.at,
        figures: payload,
        action,
      })
      .onConflictDoNothing(),
    eventStatement(ctx, {
      accountId: subuser.accountId,
      type: eventTypes.subuserTrafficSpike,
      payload,
      dedupeKey: `${eventTypes.subuserTrafficSpike}:${alert.spikeId}`,
      at: alert.at,
    }),
  ];
  const pending = sql`EXISTS (SELECT 1 FROM ${subuserTrafficSpikes} WHERE ${subuserTrafficSpikes.id} = ${alert.spikeId}
    AND ${subuserTrafficSpikes.acknowledgedAt} IS NULL)`;
  const live = and(eq(subusers.id, subuser.id), isNull(subusers.deletedAt), pending);
  if (action === "disable") {
    steps.push(
      ctx.db
        .update(subusers)
        .set({ status: "disabled", spikeDisabledBy: alert.spikeId, updatedAt: alert.at })
        .where(and(live, eq(subusers.status, "active"))),
    );
  } else if (capRps !== null) {
    steps.push(
      ctx.db
        .update(subusers)
        .set({ spikeCapRps: capRps, spikeCappedBy: alert.spikeId, updatedAt: alert.at })
        .where(live),
    );
  }
  return steps;
}

function spikeEnded(ctx: DomainContext, accountId: string, alert: SpikeAlert): Step[] {
  const payload = {
    spike: alert.spikeId,
    subuser: alert.subuserId,
    started_at: toIso(alert.startedAt),
    ended_at: toIso(alert.at),
    peak: rateFigures(alert.peak),
    gb: bytesToGb(alert.bytes),
    requests: alert.requests,
    ...episodeSamples(alert),
  };
  return [
    ctx.db
      .update(subuserTrafficSpikes)
      .set({ endedAt: alert.at, outcome: payload })
      .where(and(eq(subuserTrafficSpikes.id, alert.spikeId), isNull(subuserTrafficSpikes.endedAt))),
    eventStatement(ctx, {
      accountId,
      type: eventTypes.subuserTrafficSpikeEnded,
      payload,
      dedupeKey: `${eventTypes.subuserTrafficSpikeEnded}:${alert.spikeId}`,
      at: alert.at,
    }),
  ];
}

/** The `cap` action's requests per second: the baseline's (at least the sensitivity's floor), rounded up. */
function baselineRps(alert: SpikeAlert): number {
  const perHour = Math.max(alert.baseline.requestsPerHour, alert.floor.requestsPerHour);
  return Math.max(1, Math.ceil(perHour / (HOUR / SECOND)));
}

function rateFigures(rate: HourlyRate) {
  return { gb_per_hour: bytesToGb(rate.bytesPerHour), requests_per_hour: rate.requestsPerHour };
}

/** The episode's top domains (their share of its sampled bytes) and client blocks. */
function episodeSamples(alert: SpikeAlert) {
  const byDomain = new Map<string, number>();
  for (const { host, bytes } of alert.sampledHosts) {
    const domain = targetDomain(host);
    byDomain.set(domain, (byDomain.get(domain) ?? 0) + bytes);
  }
  const total = Math.max(1, alert.sampledBytes);
  return {
    top_domains: [...byDomain]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, DOMAINS_NAMED)
      .map(([domain, bytes]) => ({ domain, share: Math.round((bytes / total) * 1000) / 1000 })),
    top_sources: alert.topSources.map((source) => ({
      block: source.block,
      first_seen: toIso(source.firstSeen),
      last_seen: toIso(source.lastSeen),
      requests: source.requests,
      bytes: source.bytes,
    })),
  };
}

export interface TrafficSpikeFilters extends PageQuery {
  subuserId?: string;
  /** Only episodes still open or with an action waiting to be acknowledged. */
  active?: boolean;
}

/** The account's spike episodes, newest first; a sub-user filter of another account answers 404. */
export async function listTrafficSpikes(
  ctx: DomainContext,
  principal: Principal,
  filters: TrafficSpikeFilters,
): Promise<TrafficSpikeRow[]> {
  if (filters.subuserId !== undefined) await findSubuser(ctx, principal, filters.subuserId);
  const page = keysetPage(subuserTrafficSpikes.id, filters);
  const conditions: Array<SQL | undefined> = [
    eq(subuserTrafficSpikes.accountId, principal.accountId),
    filters.subuserId === undefined ? undefined : eq(subuserTrafficSpikes.subuserId, filters.subuserId),
    page.where,
    filters.active
      ? sql`(${subuserTrafficSpikes.endedAt} IS NULL OR (${subuserTrafficSpikes.action} != 'none'
          AND ${subuserTrafficSpikes.acknowledgedAt} IS NULL))`
      : undefined,
    productsInScope(principal, subusers.products),
    subusersReached(principal, subuserTrafficSpikes.subuserId),
  ];
  const rows = await ctx.db
    .select({ spike: subuserTrafficSpikes })
    .from(subuserTrafficSpikes)
    .innerJoin(subusers, eq(subusers.id, subuserTrafficSpikes.subuserId))
    .where(and(...conditions))
    .orderBy(page.orderBy)
    .limit(page.limit);
  return rows.map((row) => row.spike);
}

/**
 * Acknowledges an episode: its own action is lifted (a sub-user it disabled is active again, a cap it set is
 * removed), and the gate hears of it at once; a status the customer set, before, during or after the episode, is
 * left as it is. Acknowledging twice changes nothing. The key must cover the sub-user's products, even to be told
 * the episode is already acknowledged.
 */
export async function acknowledgeTrafficSpike(
  ctx: DomainContext,
  principal: Principal,
  id: string,
): Promise<TrafficSpikeRow> {
  const spike = await findTrafficSpike(ctx, principal, id);
  const subuser = await findSubuser(ctx, principal, spike.subuserId);
  if (spike.acknowledgedAt !== null) return spike;
  const at = now();
  const lifted = liftedBy(spike, subuser);
  const changes: Partial<SubuserRow> = { updatedAt: at, ...lifted?.changes };
  const steps: Step[] = [
    ctx.db
      .update(subuserTrafficSpikes)
      .set({ acknowledgedAt: at })
      .where(and(eq(subuserTrafficSpikes.id, spike.id), isNull(subuserTrafficSpikes.acknowledgedAt))),
  ];
  if (lifted) {
    // Only while the episode's own action still holds: a status the customer set meanwhile stays.
    steps.push(
      ctx.db
        .update(subusers)
        .set(changes)
        .where(and(eq(subusers.id, subuser.id), lifted.stillHeld)),
    );
  }
  await commit(ctx, [
    ...steps,
    ...auditStatements(ctx, {
      action: "subuser.updated",
      accountId: subuser.accountId,
      resourceId: subuser.id,
      products: subuser.products,
      before: subuser,
      after: changes,
    }),
  ]);
  await syncGate(ctx, subuser.name);
  return { ...spike, acknowledgedAt: at };
}

/**
 * What acknowledging an episode changes on its sub-user: the action the episode itself took, undone (null: it took
 * none, or the customer has set the status since), and the condition that it still holds when written.
 */
function liftedBy(
  spike: TrafficSpikeRow,
  subuser: SubuserRow,
): { changes: Partial<SubuserRow>; stillHeld: SQL } | null {
  if (subuser.spikeDisabledBy === spike.id) {
    return { changes: { status: "active", spikeDisabledBy: null }, stillHeld: eq(subusers.spikeDisabledBy, spike.id) };
  }
  if (subuser.spikeCappedBy === spike.id) {
    return { changes: { spikeCapRps: null, spikeCappedBy: null }, stillHeld: eq(subusers.spikeCappedBy, spike.id) };
  }
  return null;
}

async function findTrafficSpike(ctx: DomainContext, principal: Principal, id: string): Promise<TrafficSpikeRow> {
  const spike = isId("trafficSpike", id)
    ? await ctx.db
        .select()
        .from(subuserTrafficSpikes)
        .where(
          and(
            eq(subuserTrafficSpikes.id, id),
            eq(subuserTrafficSpikes.accountId, principal.accountId),
            subusersReached(principal, subuserTrafficSpikes.subuserId),
          ),
        )
        .get()
    : undefined;
  if (!spike) throw new ApiError("traffic_spike_not_found");
  return spike;
}
