// The local gateway against the real API (`wrangler dev`): `npm run test:gateway`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { socksStatusByte } from "../../src/platform/gateway-rules.ts";
import { sessionKey, stickyExit } from "../../src/platform/sticky-sessions.ts";
import {
  connectTunnel,
  eventually,
  getThrough,
  proxiedGet,
  type Stack,
  type Subuser,
  socks5Connect,
  startStack,
  v1,
} from "./harness.ts";

const socksByte = socksStatusByte;

let stack: Stack;
let token: string;

const createSubuser = (body: object = {}) => stack.createSubuser(token, "gw", body);

const user = (subuser: Subuser, segments = "type-res-region-us") => `user_${subuser.name}-${segments}`;
/** A product's simulated exits, as every node starts with them (gateway/exits.ts). */
const exitsIn = (network: string) => Array.from({ length: 254 }, (_, i) => `${network}.${i + 1}`);

async function trafficOf(
  subuser: Subuser,
  { product = "residential", groupBy }: { product?: string; groupBy?: string } = {},
) {
  const from = new Date(Date.now() - 3600_000).toISOString();
  const to = new Date(Date.now() + 3600_000).toISOString();
  const query = `from=${from}&to=${to}&subuser=${subuser.id}${groupBy ? `&group_by=${groupBy}` : ""}`;
  const { body } = await v1(stack.base, token, "GET", `/${product}/traffic?${query}`);
  return groupBy ? body.rows : (body.rows[0] ?? { requests: 0, bytes_in: 0, bytes_out: 0 });
}

before(async () => {
  stack = await startStack();
  const account = await stack.admin("POST", "/accounts", {
    email: `gateway-${Date.now()}@example.com`,
    plan: "pro",
    balance_usd: 100,
  });
  token = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, {})).token;
  for (const product of ["residential", "mobile"]) {
    const order = await v1(stack.base, token, "POST", "/orders", { product, gb: 1 });
    assert.equal(order.status, 201, JSON.stringify(order.body));
  }
});

after(async () => {
  await stack?.stop();
});

describe("the local gateway in front of the API", () => {
  it("admits an HTTP proxy request, forwards it to the loopback target and adds the exit headers", async () => {
    const subuser = await createSubuser();
    const answer = await proxiedGet(stack.gatewayPort, {
      username: user(subuser, "type-res-region-us-state-ca-city-la"),
      password: subuser.password,
      url: stack.targetUrl,
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body, "target says hello\n");
    assert.match(String(answer.headers["x-gateway-exit-ip"]), /^198\.51\.100\.\d+$/);
    assert.equal(answer.headers["x-gateway-exit-geo"], "us/ca/la");
    assert.match(String(answer.headers["x-gateway-exit-asn"]), /^\d+$/);
    assert.match(String(answer.headers["x-gateway-request-id"]), /^req_/);
    assert.ok(Number(answer.headers["x-gateway-bytes-in"]) > 0);
    assert.ok(Number(answer.headers["x-gateway-bytes-out"]) > 0);
  });

  it("admits a CONNECT tunnel and a SOCKS5 connection with the same credentials", async () => {
    const subuser = await createSubuser();
    const tunnel = await connectTunnel(stack.gatewayPort, {
      username: user(subuser),
      password: subuser.password,
      authority: `127.0.0.1:${stack.targetPort}`,
    });
    assert.equal(tunnel.status, 200);
    assert.match(String(tunnel.headers["x-gateway-exit-ip"]), /^198\.51\.100\./);
    assert.match(await getThrough(tunnel.socket, "127.0.0.1"), /target says hello/);

    const socks = await socks5Connect(stack.gatewayPort, {
      username: user(subuser),
      password: subuser.password,
      host: "127.0.0.1",
      targetPort: stack.targetPort,
    });
    assert.deepEqual([socks.authStatus, socks.reply], [0, 0]);
    assert.ok(socks.socket);
    assert.match(await getThrough(socks.socket, "127.0.0.1"), /target says hello/);
  });

  it("a wrong password is 407 auth-failed (HTTP header; SOCKS5 status byte)", async () => {
    const subuser = await createSubuser();
    const answer = await proxiedGet(stack.gatewayPort, {
      username: user(subuser),
      password: "wrong",
      url: stack.targetUrl,
    });
    assert.equal(answer.status, 407);
    assert.equal(answer.headers["x-service-error-code"], "auth-failed");
    assert.match(String(answer.headers["proxy-authenticate"]), /^Basic/);
    const socks = await socks5Connect(stack.gatewayPort, {
      username: user(subuser),
      password: "wrong",
      host: "127.0.0.1",
      targetPort: stack.targetPort,
    });
    assert.equal(socks.authStatus, socksByte("auth-failed"));
  });

  it("a username the grammar refuses is 400 with its code", async () => {
    const subuser = await createSubuser();
    const answer = await proxiedGet(stack.gatewayPort, {
      username: `user_${subuser.name}-type-res`,
      password: subuser.password,
      url: stack.targetUrl,
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers["x-service-error-code"], "bad-username");
  });

  it("a disabled sub-user is 403 subuser-disabled, and enabled again it is admitted at once", async () => {
    const subuser = await createSubuser();
    await v1(stack.base, token, "PATCH", `/subusers/${subuser.id}`, { status: "disabled" });
    const request = { username: user(subuser), password: subuser.password, url: stack.targetUrl };
    const refused = await proxiedGet(stack.gatewayPort, request);
    assert.equal(refused.status, 403);
    assert.equal(refused.headers["x-service-error-code"], "subuser-disabled");
    const socks = await socks5Connect(stack.gatewayPort, {
      ...request,
      host: "127.0.0.1",
      targetPort: stack.targetPort,
    });
    assert.equal(socks.authStatus, socksByte("subuser-disabled"));

    await v1(stack.base, token, "PATCH", `/subusers/${subuser.id}`, { status: "active" });
    assert.equal((await proxiedGet(stack.gatewayPort, request)).status, 200);
  });

  it("over rps_max new requests are 429 rps-limit with Retry-After and service code 30002", async () => {
    const subuser = await createSubuser({ rps_max: 1 });
    const request = { username: user(subuser), password: subuser.password, url: stack.targetUrl };
    const answers = await Promise.all([1, 2, 3].map(() => proxiedGet(stack.gatewayPort, request)));
    const limited = answers.filter((answer) => answer.status === 429);
    assert.ok(limited.length >= 1, `statuses: ${answers.map((answer) => answer.status)}`);
    assert.equal(limited[0]?.headers["x-service-error-code"], "rps-limit");
    assert.equal(limited[0]?.headers["x-service-code"], "30002");
    assert.match(String(limited[0]?.headers["retry-after"]), /^\d+$/);
  });

  it("over concurrent_max a new connection is 429 concurrent-limit; closing one releases its lease", async () => {
    const subuser = await createSubuser({ concurrent_max: 1 });
    const credentials = { username: user(subuser), password: subuser.password };
    const held = await connectTunnel(stack.gatewayPort, { ...credentials, authority: `127.0.0.1:${stack.targetPort}` });
    assert.equal(held.status, 200);

    const refused = await proxiedGet(stack.gatewayPort, { ...credentials, url: stack.targetUrl });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers["x-service-error-code"], "concurrent-limit");

    held.socket.destroy();
    await eventually(
      async () => (await proxiedGet(stack.gatewayPort, { ...credentials, url: stack.targetUrl })).status === 200,
    );
  });

  it("a sticky session keeps its exit across connections, decided at the node with no sessions call", async () => {
    const subuser = await createSubuser();
    const request = {
      username: user(subuser, "type-res-region-us-session-pin1-sesstime-5"),
      password: subuser.password,
      url: stack.targetUrl,
    };
    const first = await proxiedGet(stack.gatewayPort, request);
    await eventually(async () => (await trafficOf(subuser)).requests === 1);
    const second = await proxiedGet(stack.gatewayPort, request);
    assert.equal(
      first.headers["x-gateway-exit-ip"],
      stickyExit(exitsIn("198.51.100"), sessionKey(request.username), 0),
    );
    assert.equal(second.headers["x-gateway-exit-ip"], first.headers["x-gateway-exit-ip"]);
    assert.ok(
      stack.gateways.every((gateway) => gateway.apiCalls["/sessions"] === undefined),
      "no node asked the API for a session",
    );

    const rotating = await Promise.all(
      [1, 2, 3].map(() => proxiedGet(stack.gatewayPort, { ...request, username: user(subuser) })),
    );
    assert.ok(new Set(rotating.map((answer) => answer.headers["x-gateway-exit-ip"])).size > 1, "rotating exits differ");
  });

  it("the sessions API lists the node's session from its usage, with its exit", async () => {
    const subuser = await createSubuser();
    const request = {
      username: user(subuser, "type-res-region-us-session-pin2-sesstime-5"),
      password: subuser.password,
      url: stack.targetUrl,
    };
    const first = await proxiedGet(stack.gatewayPort, request);
    await proxiedGet(stack.gatewayPort, request);
    const session = await eventually(async () => {
      const { body } = await v1(stack.base, token, "GET", `/residential/sessions?subuser=${subuser.id}`);
      return body.data.find((found: { requests: number }) => found.requests === 2);
    }, 10_000);
    assert.equal(session.session_id, "pin2");
    assert.equal(session.exit_ip, first.headers["x-gateway-exit-ip"]);
  });

  it("after a DELETE the session is terminated and the username's next request has a new exit within 1 s", async () => {
    const subuser = await createSubuser();
    const request = {
      username: user(subuser, "type-res-region-us-session-end1-sesstime-30"),
      password: subuser.password,
      url: stack.targetUrl,
    };
    const first = await proxiedGet(stack.gatewayPort, request);
    const session = await eventually(async () => {
      const { body } = await v1(stack.base, token, "GET", `/residential/sessions?subuser=${subuser.id}`);
      return body.data.find((found: { session_id: string }) => found.session_id === "end1");
    }, 10_000);
    const ended = await v1(stack.base, token, "DELETE", `/residential/sessions/${session.id}`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal(ended.body.status, "terminated");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const next = await proxiedGet(stack.gatewayPort, request);
    assert.notEqual(next.headers["x-gateway-exit-ip"], first.headers["x-gateway-exit-ip"]);
    assert.equal(next.headers["x-gateway-exit-ip"], stickyExit(exitsIn("198.51.100"), sessionKey(request.username), 1));
  });

  it("usage arrives exactly once: traffic counts each request and its bytes once", async () => {
    const subuser = await createSubuser();
    const request = { username: user(subuser), password: subuser.password, url: stack.targetUrl };
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await proxiedGet(stack.gatewayPort, request));
    const bytes = answers.reduce(
      (sum, answer) =>
        sum + Number(answer.headers["x-gateway-bytes-in"]) + Number(answer.headers["x-gateway-bytes-out"]),
      0,
    );
    await eventually(async () => (await trafficOf(subuser)).requests >= 5);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const traffic = await trafficOf(subuser);
    assert.equal(traffic.requests, 5);
    assert.equal(traffic.bytes_in + traffic.bytes_out, bytes);
    // The records carry the client's address: the sub-user's sources list its block (the test connects locally).
    const { body: sources } = await v1(stack.base, token, "GET", `/subusers/${subuser.id}/sources`);
    assert.deepEqual(
      sources.data.map((source: { block: string; requests: number; bytes: number }) => [
        source.block,
        source.requests,
        source.bytes,
      ]),
      [["127.0.0.0/24", 5, bytes]],
    );
  });

  it("mobile adds carrier and repinned headers; a repin moves the sticky exit, and later requests keep it", async () => {
    const subuser = await createSubuser({ products: ["mobile"] });
    const request = {
      username: user(subuser, "type-mob-region-de-session-m1-sesstime-30"),
      password: subuser.password,
      url: stack.targetUrl,
    };
    const first = await proxiedGet(stack.gatewayPort, request);
    assert.equal(first.status, 200);
    assert.match(String(first.headers["x-gateway-exit-ip"]), /^203\.0\.113\.\d+$/);
    assert.ok(first.headers["x-gateway-carrier"]);
    assert.equal(first.headers["x-gateway-repinned"], "false");
    await eventually(async () => (await trafficOf(subuser, { product: "mobile" })).requests === 1);

    const moved = await proxiedGet(stack.gatewayPort, { ...request, headers: { "X-Simulate-Repin": "true" } });
    assert.equal(moved.headers["x-gateway-repinned"], "true");
    assert.notEqual(moved.headers["x-gateway-exit-ip"], first.headers["x-gateway-exit-ip"]);
    const later = await proxiedGet(stack.gatewayPort, request);
    assert.equal(later.headers["x-gateway-exit-ip"], moved.headers["x-gateway-exit-ip"]);
    assert.equal(later.headers["x-gateway-repinned"], "false");
    await eventually(async () => (await trafficOf(subuser, { product: "mobile" })).requests === 3);
  });

  it("the sessions API shows a repinned session with its new exit", async () => {
    const subuser = await createSubuser({ products: ["mobile"] });
    const request = {
      username: user(subuser, "type-mob-region-de-session-m2-sesstime-30"),
      password: subuser.password,
      url: stack.targetUrl,
    };
    await proxiedGet(stack.gatewayPort, request);
    const moved = await proxiedGet(stack.gatewayPort, { ...request, headers: { "X-Simulate-Repin": "true" } });
    const session = await eventually(async () => {
      const { body } = await v1(stack.base, token, "GET", `/mobile/sessions?subuser=${subuser.id}`);
      return body.data.find((found: { repinned: boolean }) => found.repinned);
    }, 10_000);
    assert.equal(session.exit_ip, moved.headers["x-gateway-exit-ip"]);
  });

  it("the X-Proxy-Tag request header becomes the usage record's tag", async () => {
    const subuser = await createSubuser();
    await proxiedGet(stack.gatewayPort, {
      username: user(subuser),
      password: subuser.password,
      url: stack.targetUrl,
      headers: { "X-Proxy-Tag": "checkout-flow" },
    });
    const rows = await eventually(async () => {
      const found = await trafficOf(subuser, { groupBy: "tag" });
      return found.length > 0 && found;
    });
    assert.deepEqual(
      rows.map((row: { tag: string; requests: number }) => [row.tag, row.requests]),
      [["checkout-flow", 1]],
    );
  });

  it("an ISP IP named in X-Isp-Ip is admitted with the batch's user and password and exits from that IP", async () => {
    const subuser = await createSubuser({ products: ["isp"] });
    const batchId = await stack.activeIspBatch(token, subuser.id);
    const [ip] = (await v1(stack.base, token, "GET", `/isp/batches/${batchId}/ips?format=json`)).body;

    const request = { username: ip.user, password: ip.pass, url: stack.targetUrl };
    const answer = await proxiedGet(stack.gatewayPort, { ...request, headers: { "X-Isp-Ip": ip.ip } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["x-gateway-exit-ip"], ip.ip);
    assert.equal(answer.headers["x-gateway-exit-asn"], "7922");

    const unknown = await proxiedGet(stack.gatewayPort, { ...request, headers: { "X-Isp-Ip": "192.0.2.1" } });
    assert.equal(unknown.status, 403);
    assert.equal(unknown.headers["x-service-error-code"], "ip-released");
  });

  it("/healthz and the echo endpoint use no credit", async () => {
    const subuser = await createSubuser();
    const health = await fetch(`http://127.0.0.1:${stack.gatewayPort}/healthz`);
    assert.equal(health.status, 200);
    const echo = await proxiedGet(stack.gatewayPort, {
      username: user(subuser),
      password: subuser.password,
      url: "http://echo.gateway.local/echo",
    });
    assert.equal(echo.status, 200);
    assert.equal(JSON.parse(echo.body).exit_ip, echo.headers["x-gateway-exit-ip"]);

    await proxiedGet(stack.gatewayPort, { username: user(subuser), password: subuser.password, url: stack.targetUrl });
    await eventually(async () => (await trafficOf(subuser)).requests >= 1);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await trafficOf(subuser)).requests, 1);
  });
});
