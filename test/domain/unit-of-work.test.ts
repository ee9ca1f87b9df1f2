import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts } from "../../src/db/schema";
import { abortIf } from "../../src/db/statements";
import { accountUpdate } from "../../src/domain/accounts/account-writes";
import { domainContext } from "../../src/domain/context";
import { commit, runUnitOfWork, Write } from "../../src/domain/unit-of-work";
import { createAccount, issueKey } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";

describe("a unit of work: statements with their after-commit effects", () => {
  it("runs each write's effect once after the commit, in order, with that statement's own result", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const ctx = domainContext(env);
    const seen: string[] = [];
    const read = ctx.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, account.id));
    const first = new Write(read, { afterCommit: (_, rows) => void seen.push(`first:${rows[0]?.id}`) });
    const second = new Write(ctx.db.select({ one: sql<number>`1` }).from(accounts).limit(1), {
      afterCommit: (_, rows) => void seen.push(`second:${rows[0]?.one}`),
    });
    const committed = await commit(ctx, [first, second]);
    expect(seen).toEqual([`first:${account.id}`, "second:1"]);
    expect(committed.of(first)).toEqual([{ id: account.id }]);
    // A step of another unit of work has no result here: asking is a programming error, not a silent undefined.
    expect(() => committed.of(read.limit(1))).toThrow(/not part of the unit of work/);
  });

  it("runs no effect when the batch rolls back, and says which guard rolled it back", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const ctx = domainContext(env);
    let effects = 0;
    const outcome = await runUnitOfWork(ctx, [
      new Write(accountUpdate(ctx.db, account.id, { company: "Rolled back" }).statement, {
        afterCommit: () => void effects++,
      }),
      abortIf(ctx.db, "state", sql`1 = 1`),
    ]);
    expect(outcome).toEqual({ committed: false, failure: "state" });
    expect(effects).toBe(0);
    const row = await ctx.db.select().from(accounts).where(eq(accounts.id, account.id)).get();
    expect(row?.company).not.toBe("Rolled back");
  });

  it("an account write is seen at once by every key of the account (the row and key ids read back in its statement)", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const other = (await issueKey(account.id)).token;
    expect((await json(await call("GET", "/v1/users/me", { token: other }))).balance.amount).toBe(10);
    await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb: 1 } });
    const after = await json(await call("GET", "/v1/users/me", { token: other }));
    expect(after.balance.amount).toBeLessThan(10);
  });

  it("an account write reads back the row and the ids of every key of the account, so every key's guard hears of it", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const other = await issueKey(account.id);
    const ctx = domainContext(env);
    const write = accountUpdate(ctx.db, account.id, { company: "Renamed" });
    const [row] = (await commit(ctx, [write])).of(write);
    expect(row?.company).toBe("Renamed");
    expect(JSON.parse(row?.keyIds ?? "[]").sort()).toEqual([account.keyId, other.id].sort());
  });

  it("a committed batch stays committed when an after-commit effect fails: later effects still run, nothing is thrown", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const ctx = domainContext(env);
    let later = 0;
    const failing = new Write(accountUpdate(ctx.db, account.id, { company: "Kept" }).statement, {
      afterCommit: () => {
        throw new Error("gate unreachable");
      },
    });
    const after = new Write(ctx.db.select({ id: accounts.id }).from(accounts).limit(1), {
      afterCommit: () => void later++,
    });
    const outcome = await runUnitOfWork(ctx, [failing, after]);
    expect(outcome.committed).toBe(true);
    expect(later).toBe(1);
    const row = await ctx.db.select().from(accounts).where(eq(accounts.id, account.id)).get();
    expect(row?.company).toBe("Kept");
  });
});
