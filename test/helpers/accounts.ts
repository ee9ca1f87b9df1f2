import { admin, json } from "./http";

export interface TestAccount {
  id: string;
  email: string;
  token: string;
  keyId: string;
}

let counter = 0;

/** An account with an API key, in one line: `const acct = await createAccount({ plan: "pro" })`. */
export async function createAccount(
  options: { plan?: string; balance_usd?: number; products?: string[]; company?: string } = {},
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
  return { id: account.id, email, token: key.token, keyId: key.id };
}

export async function issueKey(accountId: string, products?: string[]): Promise<{ id: string; token: string }> {
  const response = await admin("POST", `/accounts/${accountId}/api-keys`, products ? { products } : {});
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${await response.text()}`);
  return json(response);
}
