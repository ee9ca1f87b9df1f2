import { admin, call, json } from "./http";

export interface TestAccount {
  id: string;
  email: string;
  token: string;
  keyId: string;
}

let counter = 0;

/**
 * An account with an API key, in one line: `const acct = await createAccount({ plan: "pro" })`. `bandwidthGb`
 * buys that much residential and mobile bandwidth (paid by an extra credit, so `balance_usd` stays as asked):
 * the gateway refuses products whose pool is used up or was never bought.
 */
export async function createAccount(
  options: { plan?: string; balance_usd?: number; products?: string[]; company?: string; bandwidthGb?: number } = {},
): Promise<TestAccount> {
  const email = `user${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const created = await admin("POST", "/accounts", {
    email,
    plan: options.plan ?? "pro",
    balance_usd: options.balance_usd ?? 0,
    ...(options.company ? { company: options.company } : {}),
  });
  if (created.status !== 201) throw new Error(`account creation failed: ${created.status} ${await created.text()}`);
  const account = await json(created);
  const key = await issueKey(account.id, options.products);
  const testAccount = { id: account.id, email, token: key.token, keyId: key.id };
  if (options.bandwidthGb) await buyBandwidth(testAccount, options.bandwidthGb);
  return testAccount;
}

/** Buys `gb` of residential and of mobile bandwidth, credited first so the balance does not change. */
export async function buyBandwidth(account: TestAccount, gb: number): Promise<void> {
  await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: Math.ceil(gb * 12.5 * 100) / 100 });
  for (const product of ["residential", "mobile"]) {
    const response = await call("POST", "/v1/orders", { token: account.token, body: { product, gb } });
    if (response.status !== 201) throw new Error(`bandwidth order failed: ${response.status} ${await response.text()}`);
  }
}

export async function issueKey(accountId: string, products?: string[]): Promise<{ id: string; token: string }> {
  const response = await admin("POST", `/accounts/${accountId}/api-keys`, products ? { products } : {});
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${await response.text()}`);
  return json(response);
}
