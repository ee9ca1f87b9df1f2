import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, subusers } from "../../src/db/schema";
import { auditStatements, changedFields } from "../../src/domain/audit/audit-log";
import { domainContext } from "../../src/domain/context";
import { commit } from "../../src/domain/unit-of-work";
import { createAccount } from "../helpers/accounts";
import { env } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";

describe("changedFields: what an audit entry says changed", () => {
  it("keeps only changed fields, by snake_case name, times as ISO 8601, and the old values beside", () => {
    const before = { label: "a", rpsMax: 5, status: "active", updatedAt: 1, expiresAt: 0 };
    const after = { label: "b", rpsMax: 5, updatedAt: 2, expiresAt: Date.UTC(2026, 0, 1) };
    expect(changedFields(before, after)).toEqual({
      changes: { label: "b", expires_at: "2026-01-01T00:00:00.000Z" },
      previous: { label: "a", expires_at: "1970-01-01T00:00:00.000Z" },
    });
  });

  it("names a secret without its storage suffix and never shows its value; a replaced secret is left out", () => {
    const { changes, previous } = changedFields(
      { passwordHash: "old-hash" },
      { passwordHash: "new-hash", previousPasswordHash: "old-hash", passwordSealed: "sealed" },
    );
    expect(changes).toEqual({ password: "[redacted]" });
    expect(previous).toEqual({ password: "[redacted]" });
  });

  it("a creation has no previous values; a removal records what was there as previous", () => {
    expect(changedFields(undefined, { label: "x", createdAt: 5 })).toEqual({ changes: { label: "x" }, previous: null });
    expect(changedFields({ ip: "198.51.100.1", id: "wl_1" }, undefined)).toEqual({
      changes: null,
      previous: { ip: "198.51.100.1" },
    });
  });
});

describe("an audit entry in the change's own batch", () => {
  const actor = { keyId: "key_test", sourceIp: "198.51.100.9", requestId: "req_audit" };

  it("with ifChanged, is written only when the write before it changed a row", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const ctx = { ...domainContext(env), actor };
    const write = (id: string) => [
      ctx.db
        .update(subusers)
        .set({ label: `x-${id}` })
        .where(eq(subusers.id, id)),
      ...auditStatements(ctx, {
        action: "subuser.updated",
        accountId: account.id,
        resourceId: id,
        after: { label: `x-${id}` },
        ifChanged: true,
      }),
    ];
    await commit(ctx, write("sub_does_not_exist"));
    await commit(ctx, write(subuser.id));
    const rows = await ctx.db.select().from(auditEvents).where(eq(auditEvents.accountId, account.id)).all();
    const updates = rows.filter((row) => row.action === "subuser.updated");
    expect(updates.map((row) => row.resourceId)).toEqual([subuser.id]);
    expect(updates[0]).toMatchObject({ actorKeyId: "key_test", sourceIp: "198.51.100.9", requestId: "req_audit" });
  });

  it("is nothing without an actor: the platform's own changes (jobs) are events, not audit entries", () => {
    expect(
      auditStatements(domainContext(env), { action: "subuser.updated", accountId: "usr_x", resourceId: "sub_x" }),
    ).toEqual([]);
  });

  it("with a fixed id, is written once however often it is written", async () => {
    const account = await createAccount();
    const ctx = { ...domainContext(env), actor };
    const entry = {
      action: "session.terminated" as const,
      accountId: account.id,
      resourceId: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
      id: "aud_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
    };
    await commit(ctx, auditStatements(ctx, entry));
    await commit(ctx, auditStatements(ctx, entry));
    const rows = await ctx.db.select().from(auditEvents).where(eq(auditEvents.accountId, account.id)).all();
    expect(rows.filter((row) => row.action === "session.terminated")).toHaveLength(1);
  });
});
