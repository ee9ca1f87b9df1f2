import type { TestAccount } from "./accounts";
import { runCron } from "./cron";
import { call, json } from "./http";
import { createSubuser, type TestSubuser } from "./subusers";

export interface TestBatch {
  orderId: string;
  batchId: string;
  subuser: TestSubuser;
}

/** An ISP order, provisioned by running the cron after the provisioning delay. */
export async function orderBatch(
  account: TestAccount,
  body: { country?: string; city?: string | null; asn?: number; quantity?: number; months?: number } = {},
  provisionAt?: number,
): Promise<TestBatch> {
  const subuser = await createSubuser(account, { products: ["isp"] });
  const response = await call("POST", "/v1/orders", {
    token: account.token,
    body: {
      product: "isp",
      country: "US",
      city: "newyork",
      asn: 7922,
      quantity: 10,
      months: 1,
      subuser: subuser.id,
      ...body,
    },
  });
  if (response.status !== 201) throw new Error(`ISP order failed: ${response.status} ${await response.text()}`);
  const order = await json(response);
  if (provisionAt !== undefined) await runCron(provisionAt);
  return { orderId: order.id, batchId: order.details.batch_id, subuser };
}

export async function batchIps(account: TestAccount, batchId: string): Promise<Array<Record<string, any>>> {
  return json(await call("GET", `/v1/isp/batches/${batchId}/ips?format=json`, { token: account.token }));
}

export async function getBatch(account: TestAccount, batchId: string): Promise<Record<string, any>> {
  return json(await call("GET", `/v1/isp/batches/${batchId}`, { token: account.token }));
}
