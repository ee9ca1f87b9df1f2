import type { TestAccount } from "./accounts";
import { admin, json } from "./http";

/** The sandbox of a test account: a `test_` key on its twin, usable wherever a TestAccount is. */
export async function sandboxOf(live: TestAccount, products?: string[]): Promise<TestAccount> {
  const response = await admin("POST", `/accounts/${live.id}/api-keys`, {
    mode: "test",
    ...(products ? { products } : {}),
  });
  if (response.status !== 201) throw new Error(`test key creation failed: ${response.status} ${await response.text()}`);
  const key = await json(response);
  return { id: key.account_id, email: live.email, token: key.token, keyId: key.id };
}
