import { and, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { subusers } from "../../db/schema";
import { toIso } from "../../platform/clock";
import type { DomainContext } from "../context";
import { eventStatement, eventTypes } from "../events";
import { runUnitOfWork } from "../unit-of-work";

/** Sub-users announced per run at most (the next minute's run takes the rest). */
const ANNOUNCED_PER_RUN = 500;

/**
 * `subuser.expired` for each live sub-user whose `expires_at` has passed and was not announced yet: once per expiry
 * (its dedupe key names the instant), so a sub-user extended and lapsing again is announced again. The gateway
 * needs nothing from this: nodes refuse from the instant itself, from their snapshots.
 */
export async function announceExpiredSubusers(ctx: DomainContext, at: number): Promise<number> {
  const lapsed = await ctx.db
    .select({ id: subusers.id, accountId: subusers.accountId, label: subusers.label, expiresAt: subusers.expiresAt })
    .from(subusers)
    .where(
      and(
        isNotNull(subusers.expiresAt),
        isNull(subusers.deletedAt),
        lte(subusers.expiresAt, at),
        or(isNull(subusers.expiryAnnouncedFor), sql`${subusers.expiryAnnouncedFor} <> ${subusers.expiresAt}`),
      ),
    )
    .limit(ANNOUNCED_PER_RUN);
  if (lapsed.length === 0) return 0;
  const statements = lapsed.flatMap((subuser) => {
    const expiresAt = subuser.expiresAt as number;
    return [
      eventStatement(ctx, {
        accountId: subuser.accountId,
        type: eventTypes.subuserExpired,
        payload: { subuser: subuser.id, label: subuser.label, expires_at: toIso(expiresAt) },
        dedupeKey: `${eventTypes.subuserExpired}:${subuser.id}:${expiresAt}`,
        at,
      }),
      ctx.db
        .update(subusers)
        .set({ expiryAnnouncedFor: expiresAt })
        .where(and(sql`${subusers.id} = ${subuser.id}`, sql`${subusers.expiresAt} = ${expiresAt}`)),
    ];
  });
  await runUnitOfWork(ctx, statements);
  return lapsed.length;
}
