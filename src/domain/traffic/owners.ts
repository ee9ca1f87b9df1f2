import { sql } from "drizzle-orm";
import { type Product, subusers } from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import type { DomainContext } from "../context";

/** Who a gateway name belongs to. A generated name never changes its sub-user, account or products. */
export interface SubuserOwner {
  subuserId: string;
  accountId: string;
  gateName: string;
  products: readonly Product[];
}

/**
 * Owners by gateway name, kept for the isolate's life: the mapping never changes, so an entry never goes stale.
 * Deleted sub-users are owners too: whether their usage still counts (the 60-second drain) is judged where it
 * lands, by the account's traffic store. Names D1 does not know are remembered as unknown for a minute, so a
 * gateway that keeps reporting one costs one query a minute.
 */
const known = new Map<string, SubuserOwner>();
const unknownUntil = new Map<string, number>();
/** Entries kept per isolate (~150 bytes each); past it, the oldest go first. */
const MAX_ENTRIES = 100_000;
const UNKNOWN_KEPT_MS = MINUTE;

/** The owners of the named sub-users; D1 is asked only for names not seen before (one query at most). */
export async function subuserOwners(ctx: DomainContext, names: string[]): Promise<Map<string, SubuserOwner>> {
  const at = now();
  const owners = new Map<string, SubuserOwner>();
  const missing: string[] = [];
  for (const name of names) {
    const owner = known.get(name);
    if (owner) owners.set(name, owner);
    else if ((unknownUntil.get(name) ?? 0) <= at) missing.push(name);
  }
  if (missing.length === 0) return owners;
  const rows = await ctx.db
    .select({
      subuserId: subusers.id,
      gateName: subusers.name,
      accountId: subusers.accountId,
      products: subusers.products,
    })
    .from(subusers)
    .where(sql`${subusers.name} IN (SELECT value FROM json_each(${JSON.stringify(missing)}))`);
  for (const row of rows) {
    remember(known, row.gateName, row);
    owners.set(row.gateName, row);
  }
  for (const name of missing) if (!owners.has(name)) remember(unknownUntil, name, at + UNKNOWN_KEPT_MS);
  return owners;
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) {
    for (const oldest of [...map.keys()].slice(0, MAX_ENTRIES / 10)) map.delete(oldest);
  }
  map.set(key, value);
}
