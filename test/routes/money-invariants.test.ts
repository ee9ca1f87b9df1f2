import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env } from "../helpers/http";

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

type Operation =
  | { kind: "order"; product: "residential" | "mobile"; gb: number }
  | { kind: "credit"; usd: number }
  | { kind: "renewal" };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("order" as const),
    product: fc.constantFrom("residential" as const, "mobile" as const),
    gb: fc.integer({ min: 1, max: 40_000 }).map((milli) => milli / 1000),
  }),
  fc.record({
    kind: fc.constant("credit" as const),
    usd: fc.integer({ min: 1, max: 30_000 }).map((cents) => cents / 100),
  }),
  fc.record({ kind: fc.constant("renewal" as const) }),
);

async function invariants(accountId: string) {
  return env.DB.prepare(
    `SELECT a.balance_minor AS balance,
            (SELECT COALESCE(SUM(amount_minor), 0) FROM ledger_entries WHERE account_id = a.id) AS ledger
     FROM accounts a WHERE a.id = ?`,
  )
    .bind(accountId)
    .first<{ balance: number; ledger: number }>();
}

describe("money invariants (property test)", () => {
  afterEach(() => vi.useRealTimers());

  // 15 runs of up to 12 concurrent writes and cron passes take 3–5 s here: past the default 5 s timeout under load.
  it("random concurrent orders, renewals and credits keep balance ≥ 0 and balance = sum of the ledger", {
    timeout: 30_000,
  }, async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40_000 }),
        fc.array(operation, { minLength: 1, maxLength: 12 }),
        async (initialCents, operations) => {
          // Each run starts its own month, so every run's subscription comes due at its own renewal.
          const start = T0 + run++ * 40 * 86_400_000;
          vi.setSystemTime(start);
          const account = await createAccount({ balance_usd: initialCents / 100 });
          await call("POST", "/v1/subscriptions", {
            token: account.token,
            body: { product: "residential", plan: "starter", cycle: "monthly" },
          });
          vi.setSystemTime(start + 32 * 86_400_000); // past the renewal date
          await Promise.all(
            operations.map((op) => {
              switch (op.kind) {
                case "order":
                  return call("POST", "/v1/orders", { token: account.token, body: { product: op.product, gb: op.gb } });
                case "credit":
                  return admin("POST", `/accounts/${account.id}/credits`, { amount_usd: op.usd });
                default:
                  return runCron(start + 32 * 86_400_000);
              }
            }),
          );
          const state = await invariants(account.id);
          expect(state?.balance).toBeGreaterThanOrEqual(0);
          expect(state?.balance).toBe(state?.ledger);
        },
      ),
      { numRuns: 15 },
    );
  });
});
