import { sql } from "drizzle-orm";
import { type Database, replicaDatabase } from "../../db/client";
import { accounts, type Product, subusers } from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import { ownerTagValid, type UsageOwner } from "../../platform/owner-tag";
import type { DomainContext } from "../context";
import { rememberTrafficShards, trafficShardCounts } from "./traffic-shards";

/** Who a gateway name belongs to. A generated name never changes its sub-user, account or products. */
export interface SubuserOwner {
  subuserId: string;
  accountId: string;
  gateName: string;
  products: readonly Product[];
}

/** An owner with its account's traffic shard count now (which store its usage goes to). */
export interface RoutedOwner extends SubuserOwner {
  trafficShards: number;
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

/**
 * The owners of the named sub-users with their accounts' shard counts. A D1 read replica is asked for names not seen
 * before (their shard counts joined) and, beside it, for the shard counts of known owners' accounts not read within
 * the minute (`traffic-shards.ts`): two queries at most, none for a batch whose names and accounts are all fresh; the
 * primary only for names the replica does not know.
 */
export async function subuserOwners(ctx: DomainContext, names: string[]): Promise<Map<string, RoutedOwner>> {
  const [cached, found] = await Promise.all([
    (async () => {
      const owners = knownOwners(names);
      return {
        owners,
        shards: await trafficShardCounts(
          ctx,
          [...owners.values()].map((owner) => owner.accountId),
        ),
      };
    })(),
    newOwners(ctx, names),
  ]);
  const routed = new Map<string, RoutedOwner>(found);
  for (const [name, owner] of cached.owners) {
    routed.set(name, { ...owner, trafficShards: cached.shards.get(owner.accountId) ?? 1 });
  }
  return routed;
}

/** The owners this isolate knows of the names. */
function knownOwners(names: string[]): Map<string, SubuserOwner> {
  const owners = new Map<string, SubuserOwner>();
  for (const name of names) {
    const owner = known.get(name);
    if (owner) owners.set(name, owner);
  }
  return owners;
}

/**
 * Owners of names not seen before (nor known unknown), read with their accounts' shard counts from a D1 read
 * replica, and from the primary for names the replica does not know (a sub-user created within its lag).
 */
async function newOwners(ctx: DomainContext, names: string[]): Promise<Map<string, RoutedOwner>> {
  const at = now();
  const owners = new Map<string, RoutedOwner>();
  const missing = names.filter((name) => !known.has(name) && (unknownUntil.get(name) ?? 0) <= at);
  if (missing.length === 0) return owners;
  const rows = await ownersIn(replicaDatabase(ctx.env.DB), missing);
  const found = new Set(rows.map((row) => row.gateName));
  const unseen = missing.filter((name) => !found.has(name));
  if (unseen.length > 0) rows.push(...(await ownersIn(ctx.db, unseen)));
  for (const { trafficShards, ...owner } of rows) {
    remember(known, owner.gateName, owner);
    owners.set(owner.gateName, { ...owner, trafficShards: rememberTrafficShards(owner.accountId, trafficShards) });
  }
  for (const name of missing) if (!owners.has(name)) remember(unknownUntil, name, at + UNKNOWN_KEPT_MS);
  return owners;
}

function ownersIn(db: Database, names: string[]) {
  return db
    .select({
      subuserId: subusers.id,
      gateName: subusers.name,
      accountId: subusers.accountId,
      products: subusers.products,
      trafficShards: accounts.trafficShards,
    })
    .from(subusers)
    .innerJoin(accounts, sql`${accounts.id} = ${subusers.accountId}`)
    .where(sql`${subusers.name} IN (SELECT value FROM json_each(${JSON.stringify(names)}))`);
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) {
    for (const oldest of [...map.keys()].slice(0, MAX_ENTRIES / 10)) map.delete(oldest);
  }
  map.set(key, value);
}

/** An owner a usage record claims (`subuser`, `account`, `owner_tag`) for its username's gateway name. */
export interface OwnerClaim extends UsageOwner {
  tag: string;
}

/**
 * Owner claims whose tag verified, per isolate (the tag binds the three, which never change together): a batch of
 * names already seen costs no HMAC. Bounded like `known`.
 */
const verifiedClaims = new Set<string>();
const MAX_VERIFIED = 100_000;

/** A claim's key (the tag included: another tag for the same owner is judged again). */
export function claimKey(claim: OwnerClaim): string {
  return `${claim.name}\n${claim.subuserId}\n${claim.accountId}\n${claim.tag}`;
}

/**
 * The owners records claim with a signed tag (`platform/owner-tag`), read from the records with no D1 read of the
 * sub-user: per claim key, the owner with its account's shard count (`traffic-shards.ts`: a cached replica read per
 * account and minute, kept because re-shard safety depends on it), or null when the tag does not verify for the
 * name, sub-user and account (a forged or misrouted record). No product check: the node refused a product the
 * sub-user lacks from the same snapshot that gave it the tag.
 */
export async function signedOwners(ctx: DomainContext, claims: OwnerClaim[]): Promise<Map<string, RoutedOwner | null>> {
  const distinct = new Map(claims.map((claim) => [claimKey(claim), claim]));
  const verdicts = await Promise.all(
    [...distinct].map(async ([key, claim]) => {
      if (verifiedClaims.has(key)) return [key, claim, true] as const;
      const valid = await ownerTagValid(ctx.env.SEALING_KEY, claim, claim.tag);
      if (valid) {
        if (verifiedClaims.size >= MAX_VERIFIED) {
          for (const oldest of [...verifiedClaims].slice(0, MAX_VERIFIED / 10)) verifiedClaims.delete(oldest);
        }
        verifiedClaims.add(key);
      }
      return [key, claim, valid] as const;
    }),
  );
  const shards = await trafficShardCounts(
    ctx,
    verdicts.filter(([, , valid]) => valid).map(([, claim]) => claim.accountId),
  );
  const owners = new Map<string, RoutedOwner | null>();
  for (const [key, claim, valid] of verdicts) {
    owners.set(
      key,
      valid
        ? {
            subuserId: claim.subuserId,
            accountId: claim.accountId,
            gateName: claim.name,
            // Not checked for signed owners (above).
            products: [],
            trafficShards: shards.get(claim.accountId) ?? 1,
          }
        : null,
    );
  }
  return owners;
}
