// Three gateway nodes in front of the real API (`wrangler dev`): limits hold across nodes, and changes reach open
// connections at every node within a second. `node --test gateway/test/nodes.test.ts` (about two minutes: the
// rotated-out password's 60 s are real time).
import assert from "node:assert/strict";
import http from "node:http";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { sessionKey, stickyExit } from "../../src/platform/sticky-sessions.ts";
import {
  connectTunnel,
  eventually,
  proxiedGet,
  type Stack,
  type Subuser,
  startStack,
  timeUntil,
  v1,
} from "./harness.ts";

const NODES = 3;
/**
 * How long a cap may take to refuse once usage passes it here: the nodes report usage every 100 ms and local
 * queues wait for nothing (in production the shard queues' 55 s window makes it 60 s, as the API says).
 */
const USAGE_DELAY_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

let stack: Stack;
let token: string;

before(async () => {
  stack = await startStack({ nodes: NODES });
  token = await stack.fundedAccount("nodes");
});

after(async () => {
  await stack?.stop();
});

const createSubuser = (body: object = {}) => stack.createSubuser(token, "nodes", body);

const user = (subuser: Subuser) => `user_${subuser.name}-type-res-region-us`;

/** Proxied GETs on one kept-alive connection to a node. */
function keptAlive(port: number, { username, password }: { username: string; password: string }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<Socket>();
  return {
    get(url: string): Promise<{ status: number | undefined; code: string | string[] | undefined }> {
      return new Promise((resolve, reject) => {
        const request = http.request({
          host: "127.0.0.1",
          port,
          path: url,
          agent,
          headers: { Host: new URL(url).host, "Proxy-Authorization": basic(username, password) },
        });
        request.on("socket", (socket) => sockets.add(socket));
        request.on("response", (response) => {
          response.resume();
          response.on("end", () =>
            resolve({ status: response.statusCode, code: response.headers["x-service-error-code"] }),
          );
        });
        request.on("error", reject);
        request.end();
      });
    },
    /** How many connections the client opened (1 while the gateway keeps it alive). */
    get connections() {
      return sockets.size;
    },
    close: () => agent.destroy(),
  };
}

/** The instants (ms) at which any node admitted a request of `name`, taken as each decision returns. */
function recordAdmissions(name: string) {
  const instants: number[] = [];
  for (const gateway of stack.gateways) {
    const { decider } = gateway;
    const connection = decider.connection;
    decider.connection = (sourceIp) => {
      const opened = connection(sourceIp);
      const decide = opened.decide.bind(opened);
      opened.decide = async (credentials) => {
        const decision = await decide(credentials);
        if (decision.allow && credentials.username.includes(name)) instants.push(Date.now());
        return decision;
      };
      return opened;
    };
  }
  return instants;
}

/** The most instants inside any window of `spanMs` starting at one of them. */
function busiestWindow(instants: number[], spanMs: number) {
  const sorted = [...instants].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && (sorted[end] as number) - (sorted[start] as number) < spanMs) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

describe("three gateway nodes in front of the API", () => {
  it("a sticky username leaves from one exit at every node with no API call; after DELETE, every node gives it a new one within 1 s", async (t) => {
    const subuser = await createSubuser();
    const request = {
      username: `user_${subuser.name}-type-res-region-us-session-all3-sesstime-30`,
      password: subuser.password,
      url: stack.targetUrl,
    };
    const exitAt = async (port: number) => (await proxiedGet(port, request)).headers["x-gateway-exit-ip"];
    const exits = await Promise.all(stack.gateways.map((gateway) => exitAt(gateway.port)));
    const pool = Array.from({ length: 254 }, (_, i) => `198.51.100.${i + 1}`);
    assert.deepEqual(exits, Array(NODES).fill(stickyExit(pool, sessionKey(request.username), 0)));
    assert.ok(stack.gateways.every((gateway) => gateway.apiCalls["/sessions"] === undefined));

    // The sessions API shows the session from the nodes' usage: three requests, that exit.
    const session = await eventually(async () => {
      const { body } = await v1(stack.base, token, "GET", `/residential/sessions?subuser=${subuser.id}`);
      return body.data.find((found: { requests: number }) => found.requests === NODES);
    }, 10_000);
    assert.equal(session.exit_ip, exits[0]);
    assert.equal(session.session_id, "all3");

    const ended = await v1(stack.base, token, "DELETE", `/residential/sessions/${session.id}`);
    assert.equal(ended.status, 200);
    const took = await Promise.all(
      stack.gateways.map((gateway) =>
        timeUntil(
          () => exitAt(gateway.port),
          (exit) => exit !== exits[0],
        ),
      ),
    );
    t.diagnostic(`a new exit after ${took.map(Math.round)} ms`);
    assert.ok(
      took.every((ms) => ms <= 1000),
      `a new exit after ${took.map(Math.round)} ms`,
    );
    const next = await Promise.all(stack.gateways.map((gateway) => exitAt(gateway.port)));
    assert.deepEqual(next, Array(NODES).fill(stickyExit(pool, sessionKey(request.username), 1)));
    const { body: old } = await v1(stack.base, token, "GET", `/residential/sessions/${session.id}`);
    assert.equal(old.status, "terminated");
  });

  it("rps_max 5 holds in every rolling second across nodes, keep-alive requests included", async (t) => {
    const subuser = await createSubuser({ rps_max: 5 });
    const admitted = recordAdmissions(subuser.name);
    const credentials = { username: user(subuser), password: subuser.password };
    const clients = stack.gateways.flatMap((gateway) => [1, 2].map(() => keptAlive(gateway.port, credentials)));
    const until = performance.now() + 4000;
    const statuses = new Map();
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < until) {
          const { status } = await client.get(stack.targetUrl);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    for (const client of clients) client.close();
    // A decision's instant is read as it returns, up to 1 ms late: the windows checked are 999 ms.
    const busiest = busiestWindow(admitted, 999);
    t.diagnostic(`${admitted.length} admitted in 4 s, at most ${busiest} in a second; statuses ${[...statuses]}`);
    assert.ok(busiest <= 5, `${busiest} admitted within a second; statuses ${[...statuses]}`);
    assert.ok(admitted.length >= 10, `only ${admitted.length} admitted in 4 s`);
    assert.deepEqual([...statuses.keys()].sort(), [200, 429]);
    assert.ok(
      clients.every((client) => client.connections === 1),
      "each client kept one connection",
    );
  });

  it("concurrent_max 3 is never exceeded across nodes; a closed tunnel's place can be taken at another node", async () => {
    const subuser = await createSubuser({ concurrent_max: 3 });
    const credentials = { username: user(subuser), password: subuser.password };
    const authority = `127.0.0.1:${stack.targetPort}`;
    const open = [];
    // Waves of new tunnels at every node until the places are all taken (capacity moves to waiting nodes within a
    // round trip or two: the gate cuts the others' shares).
    const until = performance.now() + 6000;
    while (open.length < 3 && performance.now() < until) {
      const answers = await Promise.all(
        stack.gateways.flatMap((gateway) =>
          [1, 2].map(() => connectTunnel(gateway.port, { ...credentials, authority })),
        ),
      );
      for (const answer of answers) {
        if (answer.status === 200) open.push(answer.socket);
        else {
          assert.equal(answer.headers["x-service-error-code"], "concurrent-limit");
          answer.socket.destroy();
        }
      }
      assert.ok(open.length <= 3, `${open.length} tunnels open at once`);
      await sleep(300);
    }
    assert.equal(open.length, 3, "the limit's places are all used");
    for (const socket of open.splice(0)) socket.destroy();
    // Each node may take a place once the others' shares come back (given back after 2 s idle, or renewed smaller).
    for (const gateway of stack.gateways) {
      let tunnel: Awaited<ReturnType<typeof connectTunnel>> | undefined;
      const took = await timeUntil(
        async () => {
          tunnel = await connectTunnel(gateway.port, { ...credentials, authority });
          return tunnel;
        },
        (answer) => answer.status === 200,
        { limitMs: 8000 },
      );
      assert.ok(took < 8000, `node ${gateway.nodeId} got no place`);
      tunnel?.socket.destroy();
    }
  });

  it("a disabled sub-user's next request on an open connection is refused at every node within 1 s; tunnels close", async (t) => {
    const subuser = await createSubuser();
    const credentials = { username: user(subuser), password: subuser.password };
    const clients = stack.gateways.map((gateway) => keptAlive(gateway.port, credentials));
    for (const client of clients) assert.equal((await client.get(stack.targetUrl)).status, 200);
    const tunnels = await Promise.all(
      stack.gateways.map((gateway) =>
        connectTunnel(gateway.port, { ...credentials, authority: `127.0.0.1:${stack.targetPort}` }),
      ),
    );
    const closedAt = tunnels.map(
      ({ socket }) => new Promise<number>((resolve) => socket.on("close", () => resolve(performance.now()))),
    );

    const patched = await v1(stack.base, token, "PATCH", `/subusers/${subuser.id}`, { status: "disabled" });
    assert.equal(patched.status, 200);
    const changedAt = performance.now();
    const took = await Promise.all(
      clients.map((client) =>
        timeUntil(
          () => client.get(stack.targetUrl),
          (answer) => answer.status === 403,
        ),
      ),
    );
    t.diagnostic(`refused after ${took.map(Math.round)} ms`);
    assert.ok(
      took.every((ms) => ms <= 1000),
      `refused after ${took.map(Math.round)} ms`,
    );
    const tunnelsClosed = await Promise.all(closedAt);
    assert.ok(
      tunnelsClosed.every((at) => at - changedAt <= 1000),
      `tunnels closed after ${tunnelsClosed.map((at) => Math.round(at - changedAt))} ms`,
    );
    for (const client of clients) {
      assert.equal((await client.get(stack.targetUrl)).code, "subuser-disabled");
      assert.equal(client.connections, 1, "refused on the connection that was admitted");
      client.close();
    }
  });

  it("a daily cap refuses with 402 daily-limit-reached at every node within the usage delay of the request that passed it", async (t) => {
    // 1 MB a day. At once through the three nodes (three usage posts, settled apart): 85 %, which passes 80 %, and
    // two answers of 10 %, which pass 100 % while the settlement of 80 % may still be on its way.
    const subuser = await createSubuser({ daily_limit_gb: 0.001 });
    // The day must not end during the test (the usage would count toward two days).
    const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
    if (toMidnight < 20_000) await sleep(toMidnight + 1000);
    const request = (port: number, bytes: number) =>
      proxiedGet(port, {
        username: user(subuser),
        password: subuser.password,
        url: `${stack.targetUrl}?bytes=${bytes}`,
      });
    const sizes = [850_000, 100_000, 100_000];
    const passed = await Promise.all(stack.gateways.map((gateway, i) => request(gateway.port, sizes[i] ?? 0)));
    assert.deepEqual(
      passed.map((answer) => answer.status),
      [200, 200, 200],
    );
    const took = await Promise.all(
      stack.gateways.map((gateway) =>
        timeUntil(
          () => request(gateway.port, 10),
          (answer) => answer.status === 402,
          { limitMs: USAGE_DELAY_MS },
        ),
      ),
    );
    t.diagnostic(`refused after ${took.map(Math.round)} ms`);
    assert.ok(
      took.every((ms) => ms <= USAGE_DELAY_MS),
      `refused after ${took.map(Math.round)} ms`,
    );
    for (const gateway of stack.gateways) {
      const refused = await request(gateway.port, 10);
      assert.deepEqual([refused.status, refused.headers["x-service-error-code"]], [402, "daily-limit-reached"]);
    }
    const used = await v1(stack.base, token, "GET", `/subusers/${subuser.id}`);
    assert.ok(used.body.traffic_used_today_gb >= 0.00105, JSON.stringify(used.body));
    // The next UTC day's reopening is decided at the node from the day in its snapshot: node-decider.test.ts
    // moves the node's clock past midnight (wrangler dev's clock cannot be moved).
  });

  it("a whitelist removal reaches open connections at every node within 1 s", async (t) => {
    const subuser = await createSubuser();
    const entry = await v1(stack.base, token, "POST", "/whitelists", {
      subuser: subuser.id,
      product: "residential",
      ip: "127.0.0.1",
    });
    assert.equal(entry.status, 201, JSON.stringify(entry.body));
    const clients = stack.gateways.map((gateway) => keptAlive(gateway.port, { username: user(subuser), password: "" }));
    for (const client of clients) assert.equal((await client.get(stack.targetUrl)).status, 200);

    const removed = await fetch(`${stack.base}/v1/whitelists/${entry.body.id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.ok(removed.ok, `DELETE: ${removed.status}`);
    const took = await Promise.all(
      clients.map((client) =>
        timeUntil(
          () => client.get(stack.targetUrl),
          (answer) => answer.status === 407,
        ),
      ),
    );
    t.diagnostic(`refused after ${took.map(Math.round)} ms`);
    assert.ok(
      took.every((ms) => ms <= 1000),
      `refused after ${took.map(Math.round)} ms`,
    );
    for (const client of clients) {
      assert.equal((await client.get(stack.targetUrl)).code, "not-whitelisted");
      client.close();
    }
  });

  it("a rotated-out password works for 60 s, then is refused 407 on open connections at every node", async (t) => {
    const subuser = await createSubuser();
    const old = { username: user(subuser), password: subuser.password };
    const clients = stack.gateways.map((gateway) => keptAlive(gateway.port, old));
    for (const client of clients) assert.equal((await client.get(stack.targetUrl)).status, 200);
    const tunnel = await connectTunnel(stack.node(1).port, { ...old, authority: `127.0.0.1:${stack.targetPort}` });
    assert.equal(tunnel.status, 200);
    const tunnelClosed = new Promise<number>((resolve) => tunnel.socket.on("close", () => resolve(performance.now())));

    const rotated = await v1(stack.base, token, "POST", `/subusers/${subuser.id}/rotate-password`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const rotatedAt = performance.now();
    const fresh = { username: user(subuser), password: rotated.body.password };
    for (const gateway of stack.gateways) {
      assert.equal((await proxiedGet(gateway.port, { ...fresh, url: stack.targetUrl })).status, 200);
      assert.equal((await proxiedGet(gateway.port, { ...old, url: stack.targetUrl })).status, 200, "a new connection");
    }

    const refusedAt = await Promise.all(
      clients.map(async (client) => {
        for (;;) {
          const answer = await client.get(stack.targetUrl);
          if (answer.status !== 200) {
            assert.deepEqual([answer.status, answer.code], [407, "auth-failed"]);
            return performance.now() - rotatedAt;
          }
          if (performance.now() - rotatedAt > 70_000) return Infinity;
          await sleep(200);
        }
      }),
    );
    t.diagnostic(`old password refused after ${refusedAt.map(Math.round)} ms`);
    // The API's overlap is 60 s from the rotation, which the answer above arrived a little after.
    assert.ok(
      refusedAt.every((ms) => ms >= 58_000 && ms <= 61_500),
      `old password refused after ${refusedAt.map(Math.round)} ms`,
    );
    // The tunnel's close may reach this process a moment after the refusals: wait for it until the deadline.
    const deadline = sleep(Math.max(0, rotatedAt + 61_500 - performance.now())).then(() => null);
    const tunnelClosedAt = await Promise.race([tunnelClosed, deadline]);
    assert.ok(tunnelClosedAt !== null && tunnelClosedAt - rotatedAt <= 61_500, "the tunnel was closed too");
    for (const client of clients) {
      assert.equal(client.connections, 1);
      client.close();
    }
  });

  it("a quiet sub-user costs no lease call at any node (standing shares); a burst past a node's part leases", async (t) => {
    // 3 slots (one a node): parts of 2–3 connections and 6–7 rps at each node.
    const subuser = await createSubuser({ concurrent_max: 8, rps_max: 20 });
    const credentials = { username: user(subuser), password: subuser.password };
    const leaseCalls = () => stack.gateways.reduce((sum, gateway) => sum + (gateway.apiCalls["/leases"] ?? 0), 0);
    const before = leaseCalls();
    for (let round = 0; round < 5; round++) {
      for (const gateway of stack.gateways) {
        assert.equal((await proxiedGet(gateway.port, { ...credentials, url: stack.targetUrl })).status, 200);
      }
      await sleep(250);
    }
    assert.equal(leaseCalls() - before, 0, "15 requests within every node's part: no lease asked");

    // 10 requests at once at one node: past its part (at most 3 connections), so the limits are leased from then on. Once
    // the other nodes have given their parts up (at once, or within a second), that node gets what it asks for, and
    // the sub-user's 20 rps still bound every rolling second across nodes.
    const admitted = recordAdmissions(subuser.name);
    const burst = () =>
      Promise.all(
        Array.from({ length: 10 }, () => proxiedGet(stack.node(0).port, { ...credentials, url: stack.targetUrl })),
      );
    await burst();
    assert.ok(leaseCalls() > before, "the burst leased");
    await sleep(1200);
    const passed = (await burst()).filter((answer) => answer.status === 200).length;
    t.diagnostic(`${passed} of 10 passed once leased; ${leaseCalls() - before} lease calls`);
    assert.ok(passed > 3, `more than the node's part passed: ${passed}`);
    assert.ok(busiestWindow(admitted, 1000) <= 20, `at most 20 in a rolling second: ${busiestWindow(admitted, 1000)}`);
  });

  it("1,000 new connections with warm credentials cost a node at most 10 API calls", async (t) => {
    const subuser = await createSubuser({ concurrent_max: 50, rps_max: 1000 });
    const gateway = stack.node(0);
    const credentials = { username: user(subuser), password: subuser.password };
    /** `count` new connections, 25 at a time, at most 500 a second (half the plan's rps cap); their statuses. */
    const connections = async (count: number) => {
      const statuses: string[] = [];
      for (let done = 0; done < count; done += 25) {
        const paced = sleep(50);
        const answers = await Promise.all(
          Array.from({ length: 25 }, () => proxiedGet(gateway.port, { ...credentials, url: stack.targetUrl })),
        );
        statuses.push(...answers.map((answer) => `${answer.status} ${answer.headers["x-service-error-code"] ?? ""}`));
        await paced;
      }
      return statuses;
    };
    // Warm: the snapshot held, and the node's shares grown to the load (shares follow demand each second).
    const warmUntil = performance.now() + 2500;
    while (performance.now() < warmUntil) await connections(25);

    // Usage batches are reported apart from decisions (every 100 ms here): they are not counted.
    const decisionCalls = () =>
      Object.entries(gateway.apiCalls)
        .filter(([path]) => path !== "/usage")
        .reduce((sum, [, count]) => sum + count, 0);
    const before = decisionCalls();
    const started = performance.now();
    const statuses = await connections(1000);
    const calls = decisionCalls() - before;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    assert.ok(
      statuses.every((status) => status === "200 "),
      `statuses: ${[...new Set(statuses)]}`,
    );
    t.diagnostic(`${calls} API calls for 1,000 connections in ${seconds} s`);
    assert.ok(
      calls <= 10,
      `${calls} API calls for 1,000 connections in ${seconds} s: ${JSON.stringify(gateway.apiCalls)}`,
    );
  });
});
