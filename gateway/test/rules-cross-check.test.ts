// One rule book, two deciders: every case of the access and limit rules is decided by the sub-user's gate (the API's
// per-connection `authorize`) and by a gateway node (a real proxied request), and both must answer the same status
// and error code (src/platform/gateway-rules.ts). Each case's limits are its own sub-user's on each side: the two
// paths count separately.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { usageRecord } from "../../test/helpers/usage-record.ts";
import type { AuthorizeDecision } from "../wire.ts";
import { connectTunnel, eventually, proxiedGet, type Stack, type Subuser, startStack, v1 } from "./harness.ts";

let stack: Stack;
let token: string;
/** A gateway node's credential, for the calls a gateway makes itself (`authorize`, `usage`). */
let gatewayToken: string;

before(async () => {
  stack = await startStack();
  const account = await stack.admin("POST", "/accounts", {
    email: `cross-check-${Date.now()}@example.com`,
    plan: "pro",
    balance_usd: 100,
  });
  token = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, {})).token;
  gatewayToken = (await stack.admin("POST", "/gateway-nodes", { node: "cross-check" })).token;
  // Residential traffic is bought; mobile is not (its pool is "used up": nothing was bought).
  const order = await v1(stack.base, token, "POST", "/orders", { product: "residential", gb: 1 });
  assert.equal(order.status, 201, JSON.stringify(order.body));
});

after(async () => {
  await stack?.stop();
});

function createSubuser(body: object = {}, key = token): Promise<Subuser> {
  return stack.createSubuser(key, "xc", body);
}

const username = (subuser: Subuser, segments = "type-res-region-us") => `user_${subuser.name}-${segments}`;

/** The gate's answer: `authorize`, as a gateway would ask it, reduced to status and code. */
/** What a decider answered: the status and the error code (null: admitted). */
interface Answer {
  status: number;
  code: string | null;
}

/** Credentials to present: `password` null for none (the whitelist decides). */
interface Presented {
  username: string;
  password: string | null;
}

async function throughGate({ username: name, password }: Presented): Promise<Answer> {
  // A gateway sends the product its listener serves: the one the username's type names.
  const product = name.includes("-type-mob") ? "mobile" : "residential";
  const response = await fetch(`${stack.base}/internal/gateway/authorize`, {
    method: "POST",
    headers: { Authorization: `Bearer ${gatewayToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ username: name, password: password ?? null, source_ip: "127.0.0.1", product }),
  });
  assert.equal(response.status, 200);
  const decision = (await response.json()) as AuthorizeDecision;
  return decision.allow ? { status: 200, code: null } : { status: decision.status, code: decision.error_code };
}

/** A node's answer: a proxied request on a new connection, reduced to status and code. */
async function throughNode({ username: name, password }: Presented): Promise<Answer> {
  const answer = await proxiedGet(stack.gatewayPort, {
    username: name,
    password: password ?? "",
    url: stack.targetUrl,
  });
  const code = answer.headers["x-service-error-code"];
  return { status: answer.status, code: typeof code === "string" ? code : null };
}

/** Both deciders, each on its own sub-user set up alike by `setUp` (it returns the credentials to present). */
async function bothDecide(setUp: () => Promise<Presented>): Promise<{ gate: Answer; node: Answer }> {
  const [forGate, forNode] = [await setUp(), await setUp()];
  return { gate: await throughGate(forGate), node: await throughNode(forNode) };
}

const cases: Array<[string, () => Promise<Presented>, Answer]> = [
  [
    "the right password is admitted",
    async () => {
      const subuser = await createSubuser();
      return { username: username(subuser), password: subuser.password };
    },
    { status: 200, code: null },
  ],
  [
    "a wrong password is 407 auth-failed",
    async () => {
      const subuser = await createSubuser();
      return { username: username(subuser), password: "wrong-password" };
    },
    { status: 407, code: "auth-failed" },
  ],
  [
    "no password from a whitelisted address is admitted",
    async () => {
      const subuser = await createSubuser();
      await whitelist(subuser, "127.0.0.1");
      return { username: username(subuser), password: null };
    },
    { status: 200, code: null },
  ],
  [
    "no password from an address off the whitelist is 407 not-whitelisted",
    async () => {
      const subuser = await createSubuser();
      await whitelist(subuser, "192.0.2.1");
      return { username: username(subuser), password: null };
    },
    { status: 407, code: "not-whitelisted" },
  ],
  [
    "a disabled sub-user is 403 subuser-disabled",
    async () => {
      const subuser = await createSubuser();
      await patch(subuser, { status: "disabled" });
      return { username: username(subuser), password: subuser.password };
    },
    { status: 403, code: "subuser-disabled" },
  ],
  [
    "a deleted sub-user is 407 auth-failed, with its password",
    async () => {
      const subuser = await createSubuser();
      await remove(subuser);
      return { username: username(subuser), password: subuser.password };
    },
    { status: 407, code: "auth-failed" },
  ],
  [
    "a deleted sub-user is 407 auth-failed through its whitelist too, like an unknown name",
    async () => {
      const subuser = await createSubuser();
      await whitelist(subuser, "127.0.0.1");
      await remove(subuser);
      return { username: username(subuser), password: null };
    },
    { status: 407, code: "auth-failed" },
  ],
  [
    "a deleted sub-user is 407 auth-failed from an address off its whitelist: it says nothing of the whitelist",
    async () => {
      const subuser = await createSubuser();
      await whitelist(subuser, "192.0.2.1");
      await remove(subuser);
      return { username: username(subuser), password: null };
    },
    { status: 407, code: "auth-failed" },
  ],
  [
    "a product the sub-user lacks is 403 product-not-allowed",
    async () => {
      const subuser = await createSubuser();
      return { username: username(subuser, "type-mob-region-us"), password: subuser.password };
    },
    { status: 403, code: "product-not-allowed" },
  ],
  [
    "a product with no pool bought is 402 bandwidth-exhausted",
    async () => {
      const subuser = await createSubuser({ products: ["residential", "mobile"] });
      return { username: username(subuser, "type-mob-region-us"), password: subuser.password };
    },
    { status: 402, code: "bandwidth-exhausted" },
  ],
  [
    "a sandbox name is 407 auth-failed",
    async () => ({ username: "user_tsandbox1-type-res-region-us", password: "x" }),
    {
      status: 407,
      code: "auth-failed",
    },
  ],
  [
    "a malformed username is 400 with the grammar's code",
    async () => {
      const subuser = await createSubuser();
      return { username: username(subuser, "type-res-state-ca"), password: subuser.password };
    },
    { status: 400, code: "state-without-region" },
  ],
];

/** A usage record of 2 MB by the sub-user: past a 0.001 GB cap. */
function overTheCap(subuser: Subuser) {
  return usageRecord(username(subuser), { bytes_in: 2_000_000 });
}

async function whitelist(subuser: Subuser, ip: string): Promise<void> {
  const added = await v1(stack.base, token, "POST", "/whitelists", {
    subuser: subuser.id,
    product: "residential",
    ip,
    label: "cross-check",
  });
  assert.equal(added.status, 201, JSON.stringify(added.body));
}

async function patch(subuser: Subuser, body: object): Promise<void> {
  const changed = await v1(stack.base, token, "PATCH", `/subusers/${subuser.id}`, body);
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
}

async function remove(subuser: Subuser): Promise<void> {
  const deleted = await v1(stack.base, token, "DELETE", `/subusers/${subuser.id}`);
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
}

describe("the gate and a node decide every case alike (one rule book)", () => {
  for (const [rule, setUp, expected] of cases) {
    it(rule, async () => {
      const { gate, node } = await bothDecide(setUp);
      assert.deepEqual(gate, expected, "the gate");
      assert.deepEqual(node, expected, "the node");
    });
  }

  it("a rotated-out password works through the overlap on both, and a wrong one still fails", async () => {
    const rotated = async () => {
      const subuser = await createSubuser();
      const rotation = await v1(stack.base, token, "POST", `/subusers/${subuser.id}/rotate-password`);
      assert.equal(rotation.status, 200, JSON.stringify(rotation.body));
      return { subuser, previous: subuser.password, current: rotation.body.password };
    };
    const [gate, node] = [await rotated(), await rotated()];
    for (const password of ["previous", "current"] as const) {
      assert.deepEqual(await throughGate({ username: username(gate.subuser), password: gate[password] }), {
        status: 200,
        code: null,
      });
      assert.deepEqual(await throughNode({ username: username(node.subuser), password: node[password] }), {
        status: 200,
        code: null,
      });
    }
    assert.deepEqual(await throughGate({ username: username(gate.subuser), password: "nope" }), {
      status: 407,
      code: "auth-failed",
    });
    assert.deepEqual(await throughNode({ username: username(node.subuser), password: "nope" }), {
      status: 407,
      code: "auth-failed",
    });
  });

  it("the monthly cap reached is 402 traffic-limit-reached on both", async () => {
    // An account of their own, whose usage meter has settled nothing yet: the cap is told to the gates at once.
    const own = await stack.fundedAccount("cross-check-cap");
    const [forGate, forNode] = [
      await createSubuser({ traffic_limit_gb: 0.001 }, own),
      await createSubuser({ traffic_limit_gb: 0.001 }, own),
    ];
    // One batch past both caps: one settlement tells both gates at once.
    const posted = await fetch(`${stack.base}/internal/gateway/usage`, {
      method: "POST",
      headers: { Authorization: `Bearer ${gatewayToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ batch_id: crypto.randomUUID(), records: [forGate, forNode].map(overTheCap) }),
    });
    assert.equal(posted.status, 202, await posted.text());
    const expected = { status: 402, code: "traffic-limit-reached" };
    const gate = await eventually(async () => {
      const answer = await throughGate({ username: username(forGate), password: forGate.password });
      return answer.code === expected.code && answer;
    });
    const node = await eventually(async () => {
      const answer = await throughNode({ username: username(forNode), password: forNode.password });
      return answer.code === expected.code && answer;
    });
    assert.deepEqual(gate, expected);
    assert.deepEqual(node, expected);
  });

  it("past rps_max in a rolling second both answer 429 rps-limit with the service code", async () => {
    const [forGate, forNode] = [await createSubuser({ rps_max: 1 }), await createSubuser({ rps_max: 1 })];
    const gateAnswers = [];
    for (let i = 0; i < 3; i++) {
      gateAnswers.push(await throughGate({ username: username(forGate), password: forGate.password }));
    }
    const nodeAnswers = [];
    for (let i = 0; i < 3; i++) {
      nodeAnswers.push(await throughNode({ username: username(forNode), password: forNode.password }));
    }
    const refusal = { status: 429, code: "rps-limit" };
    assert.deepEqual(gateAnswers.slice(1), [refusal, refusal]);
    assert.deepEqual(nodeAnswers.slice(1), [refusal, refusal]);
  });

  it("past concurrent_max open connections both answer 429 concurrent-limit", async () => {
    const [forGate, forNode] = [
      await createSubuser({ concurrent_max: 1, rps_max: 100 }),
      await createSubuser({ concurrent_max: 1, rps_max: 100 }),
    ];
    // The gate: one authorize holds a lease until released; the second is over the limit.
    assert.deepEqual(await throughGate({ username: username(forGate), password: forGate.password }), {
      status: 200,
      code: null,
    });
    const gate = await throughGate({ username: username(forGate), password: forGate.password });
    // The node: an open tunnel holds the place; a new connection is over the limit.
    const target = new URL(stack.targetUrl);
    const tunnel = await connectTunnel(stack.gatewayPort, {
      username: username(forNode),
      password: forNode.password,
      authority: `${target.hostname}:${target.port}`,
    });
    assert.equal(tunnel.status, 200);
    const node = await throughNode({ username: username(forNode), password: forNode.password });
    tunnel.socket.destroy();
    const refusal = { status: 429, code: "concurrent-limit" };
    assert.deepEqual(gate, refusal);
    assert.deepEqual(node, refusal);
  });
});
