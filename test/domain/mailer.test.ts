import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { invitations } from "../../src/db/schema";
import { type DomainContext, domainContext, type Principal } from "../../src/domain/context";
import { sendMail } from "../../src/domain/mail/mailer";
import { createInvitation } from "../../src/domain/members/invitations";
import { ApiError } from "../../src/platform/errors";
import { createAccount } from "../helpers/accounts";
import { env } from "../helpers/http";
import { uniqueEmail } from "../helpers/members";

/** A context whose mail goes through a stand-in `EMAIL` binding (the outbox off, as in production). */
function sendingContext(send: (message: unknown) => Promise<unknown>): DomainContext {
  const sending = { ...env, MAIL_OUTBOX: "off", EMAIL: { send } } as unknown as Cloudflare.Env;
  return domainContext(sending);
}

function ownerPrincipal(accountId: string): Principal {
  return {
    keyId: null,
    member: {
      id: "mem_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
      email: "owner@example.com",
      role: "owner",
      sessionId: null,
      sessionEndsAt: null,
    },
    guardId: "mem_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
    accountId,
    plan: "pro",
    products: null,
    scopes: null,
    subuserIds: null,
    keysOf: null,
    keyExpiresAt: null,
    tokenHash: "",
    tokenReplacedUntil: null,
    accountRevision: "",
    livemode: true,
  };
}

describe("the mailer", () => {
  it("sends through the EMAIL binding from the notifications sender when the outbox is off", async () => {
    const sent: unknown[] = [];
    await sendMail(
      sendingContext(async (message) => sent.push(message)),
      { to: "a@example.com", subject: "Hello", text: "Body" },
    );
    expect(sent).toEqual([{ from: env.NOTIFICATIONS_EMAIL_FROM, to: "a@example.com", subject: "Hello", text: "Body" }]);
  });

  it("an invitation whose mail cannot be sent is withdrawn: 502 mail_failed, no pending invitation left", async () => {
    const account = await createAccount();
    const ctx = sendingContext(async () => {
      throw new Error("destination address not verified");
    });
    const email = uniqueEmail("unmailable");
    const attempt = createInvitation(ctx, ownerPrincipal(account.id), { email, role: "viewer" });
    await expect(attempt).rejects.toBeInstanceOf(ApiError);
    await expect(attempt).rejects.toMatchObject({ code: "mail_failed", status: 502 });
    const left = await domainContext(env).db.select().from(invitations).where(eq(invitations.email, email));
    expect(left).toEqual([]);
  });
});
