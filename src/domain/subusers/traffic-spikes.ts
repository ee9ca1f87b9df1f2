import { and, eq, inArray, isNull, lte, type SQL, sql } from "drizzle-orm";
import {
  type SpikeLesson,
  type SpikeSettingValue,
  type SubuserRow,
  subusers,
  subuserTrafficSpikes,
  type TrafficSpikeRow,
  trafficSpikeDigests,
} from "../../db/schema";
import { lessonOf, type TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { HourlyRate, SpikeAlert, SpikeAlertReceipt } from "../../durable-objects/traffic-store/contract";
import { HOUR, now, SECOND, toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newIdAt } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { bytesToGb, gbToBytes } from "../../platform/units";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { eventStatement, eventTypes } from "../events";
import { productsInScope, subusersReached } from "../scope";
import { accountStores } from "../traffic/store";
import { targetDomain } from "../traffic/target-domain";
import { commit, runUnitOfWork, type Step } from "../unit-of-work";
import { syncGate } from "./gate-sync";
import { findSubuser } from "./subusers";

const DOMAINS_NAMED = 5;
const ALERTS_PER_WRITE = 40;
/** After an account's spike notification, episodes that start within this window wait for one more at its end. */
export const DIGEST_WINDOW_MS = HOUR;
/** Episodes a notification lists (all of them count in `episode_count`; `GET /traffic-spikes?digest=` lists the rest). */
const EPISODES_LISTED = 100;
/** Due digests one run of the job notifies. */
const DIGESTS_PER_RUN = 100;

/**
 * Records the spike alerts of one of the account's stores and confirms them back to it (as `announceNewSources`
 * does for new sources). A start is recorded as an episode, unless D1 says the sub-user is off, and joins the
 * account's waiting digest: the digest is announced as one `subuser.traffic_spike` at once when the account's last
 * one is a window old, else at the window's end (`announceDueSpikeDigests`). A store that judged at another setting
 * than D1's is told again. The sub-user's action, if any, is taken in the same unit of work (disable, or cap at its
 * baseline), never again once acknowledged. An end closes the episode and records `subuser.traffic_spike_ended`.
 * An alert that fails to record stays in the store's outbox.
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
  let latestStart: number | null = null;
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
    // A start recorded before (a redelivery) is in its digest already, and its action was taken with it.
    if (!recorded.has(alert.spikeId)) {
      steps.push(...spikeStarted(ctx, subuser, alert));
      latestStart = Math.max(latestStart ?? alert.at, alert.at);
    }
    recorded.add(alert.spikeId);
    if (subuser.spikeAction !== "none") acted.add(subuser.name);
  }
  if (latestStart !== null) {
    steps.unshift(waitingDigest(ctx, accountId, latestStart));
    steps.push(...digestNotified(ctx, accountId, latestStart));
  }
  if (steps.length > 0) await runUnitOfWork(ctx, steps);
  await Promise.all([...acted].map((name) => syncGate(ctx, name)));
  await store.confirmSpikeAlerts(alerts.map(({ spikeId, kind }): SpikeAlertReceipt => ({ spikeId, kind })));
  await Promise.all([...resync].map(([id, setting]) => store.configureSpikes(id, setting)));
}

/** The episode, in the account's waiting digest, and the sub-user's action (only while it is not acknowledged). */
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
        digestId: waitingDigestId(subuser.accountId),
      })
      .onConflictDoNothing(),
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

/**
 * The account's waiting digest, created if there is none: due at once when its last notification is a window
 * old, else a window after it. At most one waits per account (a unique index), so stores recording at the same
 * time share it.
 */
function waitingDigest(ctx: DomainContext, accountId: string, at: number): Step {
  const lastNotified = sql`(SELECT MAX(${trafficSpikeDigests.notifiedAt}) FROM ${trafficSpikeDigests}
    WHERE ${trafficSpikeDigests.accountId} = ${accountId})`;
  return ctx.db
    .insert(trafficSpikeDigests)
    .values({
      id: newIdAt("trafficSpikeDigest", at),
      accountId,
      dueAt: sql`MAX(${at}, COALESCE(${lastNotified} + ${DIGEST_WINDOW_MS}, 0))`,
    })
    .onConflictDoNothing();
}

function waitingDigestId(accountId: string): SQL {
  return sql`(SELECT ${trafficSpikeDigests.id} FROM ${trafficSpikeDigests}
    WHERE ${trafficSpikeDigests.accountId} = ${accountId} AND ${trafficSpikeDigests.notifiedAt} IS NULL)`;
}

/**
 * The account's waiting digest announced, if it is due at `at` and holds an episode: one `subuser.traffic_spike`
 * whose top-level figures are its first episode's (the payload of a single episode, as before digests), with the
 * digest's id, its number of episodes and up to 100 of them, oldest first.
 */
function digestNotified(ctx: DomainContext, accountId: string, at: number): Step[] {
  const d = trafficSpikeDigests;
  const s = subuserTrafficSpikes;
  const due = and(
    eq(d.accountId, accountId),
    isNull(d.notifiedAt),
    lte(d.dueAt, at),
    sql`EXISTS (SELECT 1 FROM ${s} WHERE ${s.digestId} = ${d.id})`,
  );
  const payload = sql`json_patch(
    (SELECT ${s.figures} FROM ${s} WHERE ${s.digestId} = ${d.id} ORDER BY ${s.id} LIMIT 1),
    json_object('digest', ${d.id},
      'episode_count', (SELECT COUNT(*) FROM ${s} WHERE ${s.digestId} = ${d.id}),
      'episodes', json((SELECT json_group_array(json(figures)) FROM (SELECT ${s.figures} AS figures FROM ${s}
        WHERE ${s.digestId} = ${d.id} ORDER BY ${s.id} LIMIT ${EPISODES_LISTED})))))`;
  return [
    eventStatement(ctx, {
      accountId,
      type: eventTypes.subuserTrafficSpike,
      payload,
      dedupeKey: sql`${`${eventTypes.subuserTrafficSpike}:`} || ${d.id}`,
      at,
      when: { from: sql`${d}`, where: due ?? sql`false` },
    }),
    ctx.db.update(d).set({ notifiedAt: at }).where(due),
  ];
}

/**
 * The job's part: every account's digest whose window has ended is announced (episodes that started within a
 * window of the account's last notification wait for it). How many.
 */
export async function announceDueSpikeDigests(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select({ accountId: trafficSpikeDigests.accountId })
    .from(trafficSpikeDigests)
    .where(
      and(
        isNull(trafficSpikeDigests.notifiedAt),
        lte(trafficSpikeDigests.dueAt, at),
        sql`EXISTS (SELECT 1 FROM ${subuserTrafficSpikes} WHERE ${subuserTrafficSpikes.digestId} = ${trafficSpikeDigests.id})`,
      ),
    )
    .limit(DIGESTS_PER_RUN);
  if (due.length === 0) return 0;
  await runUnitOfWork(
    ctx,
    due.flatMap(({ accountId }) => digestNotified(ctx, accountId, at)),
  );
  return due.length;
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
  /** Only the episodes one notification announced. */
  digestId?: string;
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
    filters.digestId === undefined ? undefined : eq(subuserTrafficSpikes.digestId, filters.digestId),
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
 * left as it is. Acknowledging twice changes nothing, but for `normal`: `true` teaches the sub-user's baseline the
 * episode's peak (`teachBaseline`), `false` undoes that. The key must cover the sub-user's products, even to be
 * told the episode is already acknowledged.
 */
export async function acknowledgeTrafficSpike(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  options: { normal?: boolean } = {},
): Promise<TrafficSpikeRow> {
  const spike = await findTrafficSpike(ctx, principal, id);
  const subuser = await findSubuser(ctx, principal, spike.subuserId);
  const at = now();
  const taught = options.normal === undefined ? spike.taught : await teachBaseline(ctx, spike, options.normal, at);
  if (spike.acknowledgedAt !== null) return { ...spike, taught };
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
  return { ...spike, acknowledgedAt: at, taught };
}

/**
 * "This is normal": the episode's peak (the higher of its detection rate and, once ended, its peak; at most 100 GB
 * and 1,000,000 requests an hour) becomes the least its sub-user's baseline is, for 28 days from now, in place of an
 * earlier lesson of the sub-user; `false` undoes this episode's lesson (an earlier one it replaced stays replaced).
 * The sub-user's traffic store is told first, so a lesson D1 shows is one the detector applies. Returns the lesson
 * the episode now holds.
 */
async function teachBaseline(
  ctx: DomainContext,
  spike: TrafficSpikeRow,
  normal: boolean,
  at: number,
): Promise<SpikeLesson | null> {
  if (!normal && spike.taught === null) return null;
  const stores = await accountStores(ctx, spike.accountId);
  const lesson = normal ? lessonOf(spike.id, episodePeak(spike), at) : null;
  await stores.storeOf(spike.subuserId).teachSpikes(spike.subuserId, spike.id, lesson);
  const taught = lesson && { bytesPerHour: lesson.rate[0], requestsPerHour: lesson.rate[1], until: lesson.until };
  const s = subuserTrafficSpikes;
  await ctx.db.batch([
    // One lesson per sub-user: a new one replaces the others.
    ctx.db
      .update(s)
      .set({ taught: null })
      .where(and(eq(s.subuserId, spike.subuserId), normal ? sql`${s.taught} IS NOT NULL` : eq(s.id, spike.id))),
    ...(taught ? [ctx.db.update(s).set({ taught }).where(eq(s.id, spike.id))] : []),
  ]);
  return taught;
}

/** An episode's highest rate known: at detection, and its peak once it ended (bytes, requests per hour). */
function episodePeak(spike: TrafficSpikeRow): [number, number] {
  const rates = [spike.figures.observed, spike.outcome?.peak].filter(Boolean) as Array<{
    gb_per_hour: number;
    requests_per_hour: number;
  }>;
  return [Math.max(...rates.map((r) => gbToBytes(r.gb_per_hour))), Math.max(...rates.map((r) => r.requests_per_hour))];
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
