import { afterEach, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call } from "../helpers/http";
import { createEndpoint, deliveries, deliveryWhen, runCron } from "./helpers";

const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);
const DAY = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
});

it("the delivery log keeps 30 days: the cron deletes older deliveries", async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  const account = await createAccount();
  const endpoint = await createEndpoint(account);
  await call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { token: account.token });
  // The delivery is made when the queue hands the event over: wait for it at T0, before time moves.
  await deliveryWhen(account, endpoint.id, () => true);
  for (const [at, left] of [
    [T0 + 30 * DAY - 60_000, 1],
    [T0 + 30 * DAY + 60_000, 0],
  ] as const) {
    vi.setSystemTime(at);
    await runCron(at);
    expect(await deliveries(account, endpoint.id)).toHaveLength(left);
  }
});
