import { and, eq, gte, isNull, lt, notInArray as notIn, type SQL, sql } from "drizzle-orm";
import { auditEvents, type Product } from "../../db/schema";
import { insertWhere, pruneMadeBefore } from "../../db/statements";
import { DAY, now, toIso } from "../../platform/clock";
import { firstIdAt, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";

import { productsInScope } from "../scope";
import { commit, type Statement, type Write } from "../unit-of-work";

/** What the log records, `resource_type.verb`: the resource type is the part before the dot. */
export const auditActions = [
  "account.created",
  "account.updated",
  "account.credited",
  "account.mfa_enrollment_started",
  "account.mfa_enabled",
  "account.mfa_disabled",
  "account.custom_tier_set",
  "api_key.created",
  "api_key.updated",
  "api_key.rotated",
  "api_key.revoked",
  "subuser.created",
  "subuser.updated",
  "subuser.password_rotated",
  "subuser.deleted",
  "whitelist_entry.created",
  "whitelist_entry.deleted",
  "order.created",
  "subscription.created",
  "subscription.updated",
  "subscription.paused",
  "subscription.canceled",
  "isp_batch.renewed",
  "isp_batch.refreshed",
  "isp_batch.released",
  "isp_batch.ip_replaced",
  "isp_batch.password_rotated",
  "session.terminated",
  "report.created",
  "report.updated",
  "report.deleted",
  "report_run.requested",
  "webhook_endpoint.created",
  "webhook_endpoint.updated",
  "webhook_endpoint.deleted",
  "webhook_endpoint.secret_rotated",
  "webhook_endpoint.tested",
  "webhook_delivery.retried",
  "proxy_test.created",
  "budget.set",
  "budget.deleted",
  "member.created",
  "member.updated",
  "member.removed",
  "member.password_changed",
  "member.password_reset",
  "member.mfa_enrollment_started",
  "member.mfa_enabled",
  "member.mfa_disabled",
  "member.sessions_revoked",
  "member.passkey_added",
  "member.passkey_removed",
  "invitation.created",
  "invitation.accepted",
  "invitation.revoked",
  "oauth_grant.created",
  "oauth_grant.revoked",
] as const;
export type AuditAction = (typeof auditActions)[number];
export type AuditResourceType = AuditAction extends `${infer Type}.${string}` ? Type : never;
export const auditResourceTypes = [
  ...new Set(auditActions.map((action) => action.split(".")[0])),
] as AuditResourceType[];

/** Entries are kept a year, then pruned by the cron. */
export const AUDIT_RETENTION_MS = 365 * DAY;

export interface AuditEntry {
  action: AuditAction;
  accountId: string;
  resourceId: string;
  /** The resource's products, when it belongs to some: a product-scoped key sees only entries it covers. */
  products?: readonly Product[] | null;
  /** The resource before the change (updates, deletes): `previous` holds the old values of the changed fields. */
  before?: object;
  /** The fields written, or the resource created. */
  after?: object;
  /** For a change made outside D1 (a session in its gate), recorded before it: an id by which to withdraw it. */
  id?: string;
}

/**
 * The log entry of a change, for the same batch as the change itself: a change without its entry (or the
 * reverse) cannot commit. With `ifChanged`, the entry must follow the write it records in the batch and is
 * written only when that write changed a row (a concurrent deletion leaves no entry for a change that did not
 * happen). Changes made by the platform (renewals, expiries) have no actor and no entry; they are events.
 */
export function auditStatements(ctx: DomainContext, entry: AuditEntry & { ifChanged?: boolean }): Statement[] {
  const actor = ctx.actor;
  if (!actor) return [];
  const at = now();
  const { changes, previous } = changedFields(entry.before, entry.after);
  const row = {
    id: entry.id ?? newId("auditEvent", at),
    accountId: entry.accountId,
    actorKeyId: actor.keyId,
    actorMemberId: actor.member?.id ?? null,
    actorMemberEmail: actor.member?.email ?? null,
    actorClientId: actor.client?.id ?? null,
    actorClientName: actor.client?.name ?? null,
    sourceIp: actor.sourceIp,
    requestId: actor.requestId,
    action: entry.action,
    resourceType: entry.action.slice(0, entry.action.indexOf(".")),
    resourceId: entry.resourceId,
    products: entry.products ? [...entry.products] : null,
    changes,
    previous,
    createdAt: at,
  };
  // `changes()` is the row count of the batch's previous statement: the same connection runs the whole batch.
  const condition = entry.ifChanged ? sql`changes() > 0` : sql`1`;
  return [insertWhere(ctx.db, auditEvents, row, condition).onConflictDoNothing()];
}

/** Withdraws an entry whose change turned out not to happen (one made outside D1, recorded before it). */
export function withdrawnEntry(ctx: DomainContext, id: string): Statement {
  return ctx.db.delete(auditEvents).where(eq(auditEvents.id, id));
}

/** Bookkeeping that is not a change anyone made: never recorded. */
const UNRECORDED = new Set([
  "id",
  "accountId",
  "createdAt",
  "updatedAt",
  "version",
  "lastLoginAt",
  "lastLoginIp",
  "lastUsedAt",
  "lastUsedIp",
  "mfaLastStep",
]);
/** Stored secrets (`…Hash`, `…Sealed`): recorded by name, never by value; the replaced ones not at all. */
const SECRET = /(?:Hash|Sealed)$/;
const REDACTED = "[redacted]";

/**
 * The fields of `after` that differ from `before` (a removal: `before` as `previous`), by their API names (snake_case, a secret's without its
 * storage suffix), with the new values in `changes` and the old ones in `previous`; times as ISO 8601.
 */
export function changedFields(
  before: object | undefined,
  after: object | undefined,
): { changes: Record<string, unknown> | null; previous: Record<string, unknown> | null } {
  // A removal records what was there.
  if (!after) return { changes: null, previous: before ? changedFields(undefined, before).changes : null };
  const old = before as Record<string, unknown> | undefined;
  const changes: Record<string, unknown> = {};
  const previous: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(after)) {
    if (value === undefined || UNRECORDED.has(field)) continue;
    const secret = SECRET.test(field);
    if (secret && field.startsWith("previous")) continue;
    if (old && !secret && JSON.stringify(old[field]) === JSON.stringify(value)) continue;
    const name = snakeCase(secret ? field.replace(SECRET, "") : field);
    changes[name] = secret ? REDACTED : shown(field, value);
    if (old) previous[name] = secret ? REDACTED : shown(field, old[field] ?? null);
  }
  return { changes, previous: old ? previous : null };
}

function shown(field: string, value: unknown): unknown {
  return field.endsWith("At") && typeof value === "number" ? toIso(value) : value;
}

function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

export interface AuditFilters extends PageQuery {
  /** A resource id, or a resource type. */
  resource?: string;
  /** A key id, or `admin`. */
  actorKey?: string;
  /** A member id: what that person did. */
  actorMember?: string;
  action?: AuditAction;
  from?: number;
  to?: number;
}

/** The account's entries, newest first, that the key's product scope covers. */
export async function listAuditEvents(ctx: DomainContext, principal: Principal, filters: AuditFilters) {
  const page = keysetPage(auditEvents.id, filters);
  const conditions: Array<SQL | undefined> = [
    eq(auditEvents.accountId, principal.accountId),
    page.where,
    resourceCondition(filters.resource),
    filters.actorKey === undefined
      ? undefined
      : filters.actorKey === "admin"
        ? and(isNull(auditEvents.actorKeyId), isNull(auditEvents.actorMemberId))
        : eq(auditEvents.actorKeyId, filters.actorKey),
    filters.actorMember === undefined ? undefined : eq(auditEvents.actorMemberId, filters.actorMember),
    filters.action ? eq(auditEvents.action, filters.action) : undefined,
    filters.from === undefined ? undefined : gte(auditEvents.id, firstIdAt("auditEvent", filters.from)),
    filters.to === undefined ? undefined : lt(auditEvents.id, firstIdAt("auditEvent", filters.to)),
    productsInScope(principal, auditEvents.products),
    principal.products === null ? undefined : notIn(auditEvents.resourceType, ACCOUNT_WIDE_KEYS_ONLY),
  ];
  return ctx.db
    .select()
    .from(auditEvents)
    .where(and(...conditions))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * Resources that only keys without a product scope may read (webhooks, reports and the budget span every product):
 * nor their entries.
 */
const ACCOUNT_WIDE_KEYS_ONLY: AuditResourceType[] = [
  "webhook_endpoint",
  "webhook_delivery",
  "report",
  "report_run",
  "budget",
];

function resourceCondition(resource: string | undefined): SQL | undefined {
  if (resource === undefined) return undefined;
  return (auditResourceTypes as string[]).includes(resource)
    ? eq(auditEvents.resourceType, resource)
    : eq(auditEvents.resourceId, resource);
}

/** Forgets entries older than a year, oldest first, a chunk per cron run. */
export function pruneAuditEvents(ctx: DomainContext, at: number): Promise<number> {
  return pruneMadeBefore(ctx.db, auditEvents, "auditEvent", at - AUDIT_RETENTION_MS);
}

/** Commits one write with its entry (written only if the write changed a row), and answers the write's result. */
export async function commitAudited<S extends Statement>(
  ctx: DomainContext,
  write: S | Write<S>,
  entry: AuditEntry,
  errors?: Parameters<typeof commit>[2],
): Promise<S["_"]["result"]> {
  const committed = await commit(ctx, [write, ...auditStatements(ctx, { ...entry, ifChanged: true })], errors);
  return committed.of(write);
}
