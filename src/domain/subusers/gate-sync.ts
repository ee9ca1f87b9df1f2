import { and, eq } from "drizzle-orm";
import { SubuserGateClient } from "../../../durable-objects";
import type { GateConfig } from "../../../durable-objects/subuser-gate";
import { accounts, subusers, whitelistEntries } from "../../db/schema";
import type { DomainContext } from "../context";
import { enforcedLimits } from "./limits";

/** The gate of one sub-user, addressed by its gateway name; it loads its configuration from D1 on first use. */
export function subuserGate(ctx: DomainContext, name: string): SubuserGateClient {
  return new SubuserGateClient(ctx.env, name, () => loadGateConfig(ctx, name));
}

/** The gate's view of a sub-user, read from D1 (the source of truth); null for an unknown name. */
async function loadGateConfig(ctx: DomainContext, name: string): Promise<GateConfig | null> {
  const row = await ctx.db
    .select({ subuser: subusers, plan: accounts.plan, overrides: accounts.limits })
    .from(subusers)
    .innerJoin(accounts, eq(accounts.id, subusers.accountId))
    .where(eq(subusers.name, name))
    .get();
  if (!row) return null;
  const { subuser, plan, overrides } = row;
  const whitelist = await ctx.db
    .select({ product: whitelistEntries.product, ip: whitelistEntries.ip })
    .from(whitelistEntries)
    .where(and(eq(whitelistEntries.scope, "subuser"), eq(whitelistEntries.scopeId, subuser.id)));
  return {
    subuserId: subuser.id,
    accountId: subuser.accountId,
    name: subuser.name,
    products: subuser.products,
    status: subuser.deletedAt !== null ? "deleted" : subuser.status,
    passwordHash: subuser.passwordHash,
    previousPasswordHash: subuser.previousPasswordHash,
    previousPasswordUntil: subuser.previousPasswordUntil,
    limits: Object.fromEntries(
      subuser.products.map((product) => [product, enforcedLimits(plan, overrides, product, subuser)]),
    ),
    whitelist,
  };
}

/** Pushes a sub-user's current state to its gate: the next gateway decision uses it. */
export async function syncGate(ctx: DomainContext, name: string): Promise<void> {
  const config = await loadGateConfig(ctx, name);
  if (config) await subuserGate(ctx, name).configure(config);
}

/** After a plan or limits change: every sub-user's gate gets the new caps. */
export async function syncAccountGates(ctx: DomainContext, accountId: string): Promise<void> {
  const rows = await ctx.db.select({ name: subusers.name }).from(subusers).where(eq(subusers.accountId, accountId));
  await Promise.all(rows.map((row) => syncGate(ctx, row.name)));
}
