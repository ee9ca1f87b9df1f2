import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountAtRevision } from "../../src/db/account-cache";
import { domainContext } from "../../src/domain/context";
import type { ApiKeyGuard } from "../../src/durable-objects/api-key-guard";
import { createAccount } from "../helpers/accounts";
import { admin, call, env, guardStub, json } from "../helpers/http";

describe("ApiKeyGuard", () => {
  it("persists the per-second buckets of the day window in its SQLite storage", async () => {
    const account = await createAccount({ plan: "trial" });
    for (let i = 0; i < 3; i++) await call("GET", "/v1/users/me", { token: account.token });
    const total = await runInDurableObject(guardStub(account.keyId), (_guard: ApiKeyGuard, state) => {
      return state.storage.sql.exec<{ total: number }>("SELECT SUM(count) AS total FROM day_buckets").one().total;
    });
    expect(total).toBe(3);
  });

  it("moves the account revision to the newest account version it is told of, never back", async () => {
    const account = await createAccount();
    const guard = guardStub(account.keyId);
    const revision = async () => {
      const result = await guard.admit(null);
      if (result.outcome !== "admitted") throw new Error(result.outcome);
      return result.accountRevision;
    };
    const before = await revision();
    await guard.accountChanged(7);
    const after = await revision();
    expect(after).not.toBe(before);
    expect(after.endsWith(".7")).toBe(true);
    // A late report of an older write (settles can arrive out of commit order) does not move it back.
    expect(await guard.settle({ accountVersion: 5 })).toBe(after);
    await guard.accountChanged(8);
    expect((await revision()).endsWith(".8")).toBe(true);
  });

  it("a configuration loaded from D1 before a revocation was pushed cannot undo it (the push is newer)", async () => {
    const account = await createAccount();
    const guard = guardStub(account.keyId);
    const admitted = await guard.admit(null);
    if (admitted.outcome !== "admitted") throw new Error(admitted.outcome);
    const loadedBefore = admitted.config;
    await guard.configure({ ...loadedBefore, revoked: true });
    // A request that loaded the key's row before the revocation hands its stale copy in late.
    expect((await guard.admit(null, loadedBefore)).outcome).toBe("revoked");
  });

  it("a cached account row is reused only at the same revision", async () => {
    const account = await createAccount({ company: "Old" });
    const ctx = domainContext(env);
    expect((await accountAtRevision(ctx.db, account.id, "k|r1")).company).toBe("Old");
    await env.DB.prepare("UPDATE accounts SET company = 'New' WHERE id = ?").bind(account.id).run();
    expect((await accountAtRevision(ctx.db, account.id, "k|r1")).company).toBe("Old");
    expect((await accountAtRevision(ctx.db, account.id, "k|r2")).company).toBe("New");
  });
});

describe("account reads stay fresh despite caching", () => {
  it("a write through one key, or by an operator, shows on the next read through another key", async () => {
    const account = await createAccount({ balance_usd: 5 });
    const second = await json(await admin("POST", `/accounts/${account.id}/api-keys`, {}));
    await call("GET", "/v1/users/me", { token: account.token });
    await call("PATCH", "/v1/users/me", { token: second.token, body: { company: "Renamed" } });
    expect((await json(await call("GET", "/v1/users/me", { token: account.token }))).company).toBe("Renamed");
    await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 1.25 });
    expect((await json(await call("GET", "/v1/users/me", { token: account.token }))).balance.amount).toBe(6.25);
    await admin("PATCH", `/accounts/${account.id}`, { plan: "starter", kyc_status: "pending" });
    expect(await json(await call("GET", "/v1/users/me", { token: second.token }))).toMatchObject({
      plan: "starter",
      kyc_status: "pending",
    });
  });
});
