import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";

describe("smoke", () => {
  it("GET /v1/users/me returns the key's account", async () => {
    const account = await createAccount({ plan: "pro", balance_usd: 12.5 });
    const response = await call("GET", "/v1/users/me", { token: account.token });
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.id).toBe(account.id);
    expect(body.balance).toEqual({ currency: "USD", amount: 12.5 });
  });
});
