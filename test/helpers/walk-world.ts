import { runDurableObjectAlarm } from "cloudflare:test";
import { newId } from "../../src/platform/ids";
import { createAccount, type TestAccount } from "./accounts";
import { admin, call } from "./http";
import { authorize, gateOf, type TestSubuser, username } from "./subusers";
import { eventually } from "./usage";

/** What the walks of the document (tests/routes/*-walk, bound keys) build their worlds with. */

const MINUTE = 60_000;

/** An account on a plan with every feature, room to pay and no rate limit in the walk's way. */
export async function roomyAccount(options: { bandwidthGb?: number } = {}): Promise<TestAccount> {
  const account = await createAccount({ plan: "enterprise", balance_usd: 10_000, ...options });
  const limits = await admin("PATCH", `/accounts/${account.id}`, { limits: { api_burst_per_min: 100_000 } });
  if (limits.status >= 300) throw new Error(`limits: ${limits.status} ${await limits.text()}`);
  return account;
}

/** An episode of `subuser`, as a traffic store would report it, to be recorded by the domain's own verb. */
export function spikeAlert(subuserId: string) {
  const at = Date.now();
  const rate = { bytesPerHour: 30e9, requestsPerHour: 36_000 };
  return {
    kind: "started" as const,
    spikeId: newId("trafficSpike", at),
    subuserId,
    sensitivity: "medium" as const,
    startedAt: at - 20 * MINUTE,
    at,
    observed: rate,
    baseline: { bytesPerHour: 0, requestsPerHour: 0, weeks: 0, days: 0 },
    floor: { bytesPerHour: 2e9, requestsPerHour: 1_000 },
    peak: rate,
    bytes: 10e9,
    requests: 12_000,
    sampledHosts: [{ host: "api.walk-target.com", bytes: 1_000 }],
    sampledBytes: 1_000,
    topSources: [],
  };
}

/** A sticky session of the sub-user, started at the gateway and told to the account's index. */
export async function startSession(
  account: TestAccount,
  subuser: TestSubuser,
  product: "residential" | "mobile",
  sessionId = "walk1",
) {
  const type = product === "residential" ? "res" : "mob";
  const decision = await authorize({
    username: username(subuser.name, `type-${type}-region-us-session-${sessionId}-sesstime-30`),
    password: subuser.password,
    product,
  });
  if (!decision.allow) throw new Error(`session refused: ${JSON.stringify(decision)}`);
  await runDurableObjectAlarm(gateOf(subuser));
  const id: string = decision.session.id;
  await eventually(
    async () => (await call("GET", `/v1/${product}/sessions/${id}`, { token: account.token })).status,
    (status) => status === 200,
  );
  return id;
}
