import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { ispAsns, ispIps, sandboxAccounts } from "../../db/schema";
import { abortIf, type Statement } from "../../db/statements";
import type { Minor } from "../../platform/money";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";

/** Countries where a city can be chosen (reference facts); elsewhere country only. */
export const TIER1_COUNTRIES = new Set(["US", "GB", "DE", "FR", "JP", "KR", "BR", "CA", "AU", "IN", "NL", "SG"]);

export interface Geo {
  /** Whose inventory: a sandbox account's orders draw from the simulated sandbox IPs, live ones from live IPs. */
  accountId: string;
  country: string;
  city: string | null;
  asn: number;
}

/** The side of the inventory an account draws from (the sandbox's simulated IPs, or the live ones). */
function inventoryOf(accountId: string): SQL {
  return eq(
    ispIps.sandbox,
    sql`EXISTS (SELECT 1 FROM ${sandboxAccounts} WHERE ${sandboxAccounts.sandboxAccountId} = ${accountId})`,
  );
}

function inGeo(geo: Geo): SQL {
  return and(
    inventoryOf(geo.accountId),
    eq(ispIps.country, geo.country),
    eq(ispIps.asn, geo.asn),
    geo.city === null ? undefined : eq(ispIps.city, geo.city),
  ) as SQL;
}

export async function availableCount(ctx: DomainContext, geo: Geo): Promise<number> {
  const row = await ctx.db
    .select({ n: sql<number>`COUNT(*)` })
    .from(ispIps)
    .where(and(eq(ispIps.status, "available"), inGeo(geo)))
    .get();
  return row?.n ?? 0;
}

/**
 * Statements that move `quantity` available IPs of a geo to a batch, and abort the batch with
 * `insufficient_inventory` unless the batch then holds exactly `expectedTotal` IPs (a concurrent order may
 * have taken some).
 */
export function allocateStatements(
  db: Database,
  allocation: Geo & {
    batchId: string;
    quantity: number;
    status: "reserved" | "assigned";
    expectedTotal: number;
    at: number;
  },
): Statement[] {
  const picked = db
    .select({ id: ispIps.id })
    .from(ispIps)
    .where(and(eq(ispIps.status, "available"), inGeo(allocation)))
    .orderBy(ispIps.id)
    .limit(allocation.quantity);
  return [
    db
      .update(ispIps)
      .set({ status: allocation.status, batchId: allocation.batchId, assignedAt: allocation.at })
      .where(inArray(ispIps.id, picked)),
    abortIf(
      db,
      "inventory",
      sql`(SELECT COUNT(*) FROM ${ispIps} WHERE ${ispIps.batchId} = ${allocation.batchId}) <> ${allocation.expectedTotal}`,
    ),
  ];
}

/** Returns IPs to the inventory: all of a batch's, or those matching `where`. */
export function releaseStatement(db: Database, where: SQL): Statement {
  return db.update(ispIps).set({ status: "available", batchId: null, assignedAt: null }).where(where);
}

export interface InventoryRow {
  country: string;
  asn: number;
  carrier: string;
  premium: boolean;
  pricePerIpMonthMinor: Minor;
  available: number;
  cities: Array<{ city: string; available: number }>;
}

/** Available quantity, cities (tier-1 countries) and price per ASN. */
export async function listInventory(
  ctx: DomainContext,
  principal: Principal,
  filter: { country?: string; asn?: number },
): Promise<InventoryRow[]> {
  assertInScope(principal, ["isp"]);
  const { db } = ctx;
  const [counts, catalogue] = await db.batch([
    db
      .select({ country: ispIps.country, asn: ispIps.asn, city: ispIps.city, n: sql<number>`COUNT(*)` })
      .from(ispIps)
      .where(
        and(
          inventoryOf(principal.accountId),
          eq(ispIps.status, "available"),
          filter.country ? eq(ispIps.country, filter.country) : undefined,
          filter.asn !== undefined ? eq(ispIps.asn, filter.asn) : undefined,
        ),
      )
      .groupBy(ispIps.country, ispIps.asn, ispIps.city),
    db
      .select()
      .from(ispAsns)
      .where(
        and(
          filter.country ? eq(ispAsns.country, filter.country) : undefined,
          filter.asn !== undefined ? eq(ispAsns.asn, filter.asn) : undefined,
        ),
      )
      .orderBy(ispAsns.country, ispAsns.asn),
  ]);
  return catalogue.map((entry) => {
    const rows = counts.filter((c) => c.country === entry.country && c.asn === entry.asn);
    return {
      country: entry.country,
      asn: entry.asn,
      carrier: entry.carrier,
      premium: entry.premium,
      pricePerIpMonthMinor: entry.pricePerIpMonthMinor,
      available: rows.reduce((sum, row) => sum + row.n, 0),
      cities: TIER1_COUNTRIES.has(entry.country)
        ? rows.filter((row) => row.city !== null).map((row) => ({ city: row.city as string, available: row.n }))
        : [],
    };
  });
}
