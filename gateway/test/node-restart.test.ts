// A gateway node killed and started again with the same id and port (as the soak does), in front of the real API
// (`wrangler dev`): once up, it admits its sub-users' requests while they are under their limits, even when the
// sub-user's gate restarted meanwhile (workerd evicts an object idle for 10 s). `node --test
// gateway/test/node-restart.test.ts` (about a minute).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { proxiedGet, type Stack, startStack } from "./harness.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stack: Stack;
let token: string;

before(async () => {
  stack = await startStack({ nodes: 3, slots: 64 });
  token = await stack.fundedAccount("restart");
});

after(async () => {
  await stack?.stop();
});

/** `perSecond` requests a second, round robin over the nodes, for `ms`; each answer with its node and instant. */
async function traffic(
  credentials: { username: string; password: string },
  { perSecond, ms }: { perSecond: number; ms: number },
) {
  const answers: Array<{ index: number; at: number; status: number; code: string | string[] }> = [];
  const started = Date.now();
  for (let sent = 0; Date.now() - started < ms; sent++) {
    const index = sent % stack.gateways.length;
    const at = Date.now();
    const answer = await proxiedGet(stack.node(index).port, { ...credentials, url: stack.targetUrl });
    answers.push({ index, at, status: answer.status, code: answer.headers["x-service-error-code"] ?? "" });
    await sleep(Math.max(0, started + ((sent + 1) * 1000) / perSecond - Date.now()));
  }
  return answers;
}

describe("a gateway node restarted with the same id", () => {
  it("admits a sub-user far under its limits once up, though the gate restarted meanwhile", async (t) => {
    const subuser = await stack.createSubuser(token, "restart", { concurrent_max: 500, rps_max: 500 });
    const credentials = { username: `user_${subuser.name}-type-res-region-us`, password: subuser.password };

    // A few requests a second at every node (64 slots: parts of 7 rps and 7 connections at each), then a burst of 12
    // at node 1, past its part: the sub-user's limits are leased from then on, for a minute at least.
    await traffic(credentials, { perSecond: 6, ms: 1500 });
    await Promise.all(
      Array.from({ length: 12 }, () => proxiedGet(stack.node(0).port, { ...credentials, url: stack.targetUrl })),
    );
    const first = await traffic(credentials, { perSecond: 6, ms: 3000 });
    const leaseCalls = () => stack.gateways.map((gateway) => gateway.apiCalls["/leases"] ?? 0);
    t.diagnostic(`leased: ${first.filter((a) => a.status !== 200).length} refused; lease calls ${leaseCalls()}`);

    // Quiet for 12 s: the gate is evicted (idle 10 s) and starts again on the next call, with grants still live.
    await sleep(12_000);
    const restartedAt = Date.now() + 5000;
    await stack.restartNode(2, 5000);
    const answers = await traffic(credentials, { perSecond: 6, ms: 20_000 });
    const refused = answers.filter((answer) => answer.status !== 200 && answer.at - restartedAt > 1000);
    t.diagnostic(
      `refused after the restart's first second: ${refused.length} of ${answers.length}: ` +
        JSON.stringify(
          refused
            .slice(0, 5)
            .map((a) => ({ node: a.index + 1, s: (a.at - restartedAt) / 1000, code: `${a.status} ${a.code}` })),
        ),
    );
    t.diagnostic(`lease calls ${leaseCalls()}`);
    assert.equal(refused.length, 0);
  });
});
