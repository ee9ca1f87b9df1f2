import { desc, eq } from "drizzle-orm";
import { mailOutbox } from "../../db/schema";
import { now } from "../../platform/clock";
import { newId } from "../../platform/ids";
import type { DomainContext } from "../context";

/** A mail to one person: plain text, from the notifications sender. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/**
 * The one way members' mail leaves: through the `EMAIL` (`send_email`) binding, or, where `MAIL_OUTBOX` is "on"
 * (local development and tests), into the local outbox instead, so invitations and resets work offline.
 */
export async function sendMail(ctx: DomainContext, mail: Mail): Promise<void> {
  if (ctx.env.MAIL_OUTBOX === "on") {
    await ctx.db.insert(mailOutbox).values({ id: newId("mail"), ...mail, createdAt: now() });
    return;
  }
  await ctx.env.EMAIL.send({ from: ctx.env.NOTIFICATIONS_EMAIL_FROM, ...mail });
}

/** The outbox's newest mail (to one address when given), for `GET /internal/dev/outbox`. */
export function outboxMail(ctx: DomainContext, options: { to?: string; limit: number }) {
  return ctx.db
    .select()
    .from(mailOutbox)
    .where(options.to ? eq(mailOutbox.to, options.to.toLowerCase()) : undefined)
    .orderBy(desc(mailOutbox.id))
    .limit(options.limit);
}
