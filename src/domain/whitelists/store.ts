import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { type Product, type WhitelistEntryRow, type WhitelistScope, whitelistEntries } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import { formatBlock, parseBlock } from "../../platform/ip";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { type AuditAction, commitAudited } from "../audit/audit-log";
import type { DomainContext } from "../context";
import { idIn } from "../scope";

/** Spec §8.5: 50 entries per sub-user per product, and 50 per ISP batch; a block counts as one. */
export const WHITELIST_LIMIT = 50;
/** Spec §2.7: IPv4 blocks no larger than /24, IPv6 no larger than /64. */
const SMALLEST_PREFIX = { ipv4: 24, ipv6: 64 } as const;

/** One whitelist: a sub-user and one of its products, or an ISP batch (product `isp`). */
export interface WhitelistScopeRef {
  accountId: string;
  scope: WhitelistScope;
  scopeId: string;
  product: Product;
}

/**
 * Canonical text of an accepted address or block; refuses hostnames, garbage, set host bits and big blocks.
 * An IPv4-mapped IPv6 entry is stored as the IPv4 address or block it maps, under the IPv4 bounds.
 */
export function canonicalWhitelistIp(input: string): string {
  const parsed = parseBlock(input);
  if (!parsed.ok) {
    const message =
      parsed.reason === "host_bits"
        ? "ip: the block has host bits set; give its network address (e.g. 203.0.113.0/24)."
        : "ip: must be an IPv4 or IPv6 address, or a CIDR block of one.";
    throw new ApiError("invalid_request", message, { details: [{ field: "ip", message }] });
  }
  if (parsed.block.prefix < SMALLEST_PREFIX[parsed.block.address.kind()]) throw new ApiError("invalid_cidr");
  return formatBlock(parsed.block);
}

export async function addWhitelistEntry(
  ctx: DomainContext,
  scope: WhitelistScopeRef,
  ip: string,
  label: string | null,
): Promise<WhitelistEntryRow> {
  const canonical = canonicalWhitelistIp(ip);
  const inScope = and(
    eq(whitelistEntries.scope, scope.scope),
    eq(whitelistEntries.scopeId, scope.scopeId),
    eq(whitelistEntries.product, scope.product),
  );
  const duplicate = await ctx.db
    .select({ id: whitelistEntries.id })
    .from(whitelistEntries)
    .where(and(inScope, eq(whitelistEntries.ip, canonical)))
    .get();
  if (duplicate) throw new ApiError("already_whitelisted");

  const entry: WhitelistEntryRow = {
    id: newId("whitelist"),
    accountId: scope.accountId,
    scope: scope.scope,
    scopeId: scope.scopeId,
    product: scope.product,
    ip: canonical,
    label,
    createdAt: now(),
  };
  // One statement: the count and the insert cannot be split by a concurrent add, so 50 is exact.
  const insert = insertWhere(
    ctx.db,
    whitelistEntries,
    entry,
    sql`(SELECT COUNT(*) FROM ${whitelistEntries} WHERE ${inScope}) < ${WHITELIST_LIMIT}`,
  ).returning({ id: whitelistEntries.id });
  let inserted: Array<{ id: string }>;
  try {
    inserted = await commitAudited(ctx, insert, { ...entryAudit(entry, "whitelist_entry.created"), after: entry });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError("already_whitelisted");
    throw error;
  }
  if (inserted.length === 0) {
    throw new ApiError("over_limit", undefined, {
      limit: { limit: WHITELIST_LIMIT, current: WHITELIST_LIMIT, raisedBy: "nothing: remove entries to make room" },
    });
  }
  return entry;
}

function entryAudit(entry: WhitelistEntryRow, action: AuditAction) {
  return { action, accountId: entry.accountId, resourceId: entry.id, products: [entry.product] };
}

export function listWhitelistEntries(ctx: DomainContext, scope: Omit<WhitelistScopeRef, "product">, query: PageQuery) {
  const page = keysetPage(whitelistEntries.id, query);
  return ctx.db
    .select()
    .from(whitelistEntries)
    .where(
      and(
        eq(whitelistEntries.accountId, scope.accountId),
        eq(whitelistEntries.scope, scope.scope),
        eq(whitelistEntries.scopeId, scope.scopeId),
        page.where,
      ),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * An entry of the caller's account in the given kind of scope (and, when `scopeIds` names some, of one of those
 * scopes: a bound key's sub-users); anything else is `not_found`.
 */
export async function findWhitelistEntry(
  ctx: DomainContext,
  accountId: string,
  scope: WhitelistScope,
  id: string,
  scopeIds: string[] | null = null,
): Promise<WhitelistEntryRow> {
  const entry = await ctx.db
    .select()
    .from(whitelistEntries)
    .where(
      and(
        eq(whitelistEntries.id, id),
        eq(whitelistEntries.accountId, accountId),
        eq(whitelistEntries.scope, scope),
        scopeIds === null ? undefined : idIn(whitelistEntries.scopeId, scopeIds),
      ),
    )
    .get();
  if (!entry) throw new ApiError("not_found", "No whitelist entry with this id exists.");
  return entry;
}

export async function removeWhitelistEntry(ctx: DomainContext, entry: WhitelistEntryRow): Promise<void> {
  await commitAudited(ctx, ctx.db.delete(whitelistEntries).where(eq(whitelistEntries.id, entry.id)), {
    ...entryAudit(entry, "whitelist_entry.deleted"),
    before: entry,
  });
}

/** Removes a whole scope's whitelist (a deleted sub-user's), as a statement for the batch that deletes it. */
export function removeScopeStatement(db: Database, scope: WhitelistScope, scopeId: string) {
  return db
    .delete(whitelistEntries)
    .where(and(eq(whitelistEntries.scope, scope), eq(whitelistEntries.scopeId, scopeId)));
}
