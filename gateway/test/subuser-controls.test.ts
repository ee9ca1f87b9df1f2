// A reseller's controls on a sub-user, decided at every node from its snapshot with no call per request: target
// rules (HTTP host, CONNECT and SOCKS5 targets) and expiry. Three nodes in front of the real API (`wrangler dev`).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  connectTunnel,
  eventually,
  proxiedGet,
  type Stack,
  type Subuser,
  socks5Connect,
  startStack,
  timeUntil,
  v1,
} from "./harness.ts";

const NODES = 3;
/** SOCKS5's reply to a target "not allowed by ruleset" (RFC 1928). */
const SOCKS_NOT_ALLOWED = 0x02;

let stack: Stack;
let token: string;

before(async () => {
  stack = await startStack({ nodes: NODES });
  token = await stack.fundedAccount("controls");
});

after(async () => {
  await stack?.stop();
});

const createSubuser = (body: object = {}) => stack.createSubuser(token, "controls", body);
const credentials = (subuser: Subuser) => ({
  username: `user_${subuser.name}-type-res-region-us`,
  password: subuser.password,
});

/** How each of the three protocols fares at a node for a target host: HTTP and CONNECT statuses, the SOCKS5 reply. */
async function reach(port: number, subuser: Subuser, host: string, targetPort = 80) {
  const who = credentials(subuser);
  const http = await proxiedGet(port, { ...who, url: `http://${host}:${targetPort}/hello` });
  const tunnel = await connectTunnel(port, { ...who, authority: `${host}:${targetPort}` });
  tunnel.socket.destroy();
  const socks = await socks5Connect(port, { ...who, host, targetPort });
  socks.socket?.destroy();
  return {
    http: [http.status, http.headers["x-service-error-code"] ?? null],
    connect: [tunnel.status, tunnel.headers["x-service-error-code"] ?? null],
    socks: socks.reply,
  };
}

const REFUSED = { http: [403, "target-denied"], connect: [403, "target-denied"], socks: SOCKS_NOT_ALLOWED };

describe("a sub-user's target rules and expiry, at every node", () => {
  it("a denied domain and its subdomains are refused 403 target-denied at every node over HTTP, CONNECT and SOCKS5", async () => {
    const subuser = await createSubuser({ target_rules: { mode: "deny", domains: ["blocked.test"], ip_ranges: [] } });
    for (const gateway of stack.gateways) {
      for (const host of ["blocked.test", "www.blocked.test", "a.b.blocked.test"]) {
        assert.deepEqual(await reach(gateway.port, subuser, host), REFUSED, `${host} at ${gateway.nodeId}`);
      }
      // Not listed: the rules let it through, so the local gateway's own limit (loopback only) answers.
      const open = await reach(gateway.port, subuser, "notblocked.test");
      assert.deepEqual(open.http, [502, "target-not-allowed"], `notblocked.test at ${gateway.nodeId}`);
      const target = await proxiedGet(gateway.port, { ...credentials(subuser), url: stack.targetUrl });
      assert.equal(target.status, 200);
    }
  });

  it("an allow-only sub-user reaches what it lists and nothing else, at every node and over every protocol", async () => {
    const subuser = await createSubuser({
      target_rules: { mode: "allow", domains: ["gateway.local"], ip_ranges: [] },
    });
    for (const gateway of stack.gateways) {
      const echo = await proxiedGet(gateway.port, { ...credentials(subuser), url: "http://echo.gateway.local/echo" });
      assert.equal(echo.status, 200, `echo at ${gateway.nodeId}`);
      for (const host of ["127.0.0.1", "localhost", "elsewhere.test"]) {
        assert.deepEqual(await reach(gateway.port, subuser, host, stack.targetPort), REFUSED, host);
      }
    }
  });

  it("a rule change refuses at every node within 1 s, closes a tunnel to the newly denied target, and shows in the request log", async (t) => {
    const subuser = await createSubuser();
    const tunnels = await Promise.all(
      stack.gateways.map((gateway) =>
        connectTunnel(gateway.port, { ...credentials(subuser), authority: `127.0.0.1:${stack.targetPort}` }),
      ),
    );
    assert.deepEqual(
      tunnels.map((tunnel) => tunnel.status),
      Array(NODES).fill(200),
    );
    const closed = tunnels.map(({ socket }) => new Promise((resolve) => socket.once("close", resolve)));

    const changed = await v1(stack.base, token, "PATCH", `/subusers/${subuser.id}`, {
      target_rules: { mode: "deny", domains: [], ip_ranges: ["127.0.0.0/8"] },
    });
    assert.equal(changed.status, 200);
    const took = await Promise.all(
      stack.gateways.map((gateway) =>
        timeUntil(
          () => proxiedGet(gateway.port, { ...credentials(subuser), url: stack.targetUrl }),
          (answer) => answer.status === 403 && answer.headers["x-service-error-code"] === "target-denied",
        ),
      ),
    );
    t.diagnostic(`refused after ${took.map(Math.round)} ms`);
    assert.ok(
      took.every((ms) => ms <= 1000),
      `refused after ${took.map(Math.round)} ms`,
    );
    await Promise.all(closed);

    // Each refusal is reported (no bytes): it shows in the request log and counts in the traffic's errors.
    const refusals = await eventually(async () => {
      const page = await v1(stack.base, token, "GET", `/residential/requests?subuser=${subuser.id}&limit=100`);
      const found = page.body.data.filter((entry: { status: number }) => entry.status === 403);
      return found.length >= NODES && found;
    });
    assert.deepEqual(
      { method: refusals[0].method, target_host: refusals[0].target_host, bytes: refusals[0].bytes },
      { method: "GET", target_host: "127.0.0.1", bytes: 0 },
    );
    const window = `from=${new Date(Date.now() - 3600_000).toISOString()}&to=${new Date(Date.now() + 3600_000).toISOString()}`;
    const errors = await eventually(async () => {
      const traffic = await v1(stack.base, token, "GET", `/residential/traffic?${window}&subuser=${subuser.id}`);
      const counted = traffic.body.rows[0]?.errors ?? 0;
      return counted >= refusals.length && counted;
    });
    assert.ok(errors >= NODES);
  });

  it("an expiry refuses 403 subuser-expired at every node within 1 s of expires_at, with no push", async (t) => {
    const expiresAt = Date.now() + 3000;
    const subuser = await createSubuser({ expires_at: new Date(expiresAt).toISOString() });
    const answers = await Promise.all(
      stack.gateways.map((gateway) => proxiedGet(gateway.port, { ...credentials(subuser), url: stack.targetUrl })),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(NODES).fill(200),
    );
    const late = await Promise.all(
      stack.gateways.map(async (gateway) => {
        await timeUntil(
          () => proxiedGet(gateway.port, { ...credentials(subuser), url: stack.targetUrl }),
          (answer) => answer.status === 403 && answer.headers["x-service-error-code"] === "subuser-expired",
          { limitMs: 10_000 },
        );
        return Date.now() - expiresAt;
      }),
    );
    t.diagnostic(`refused ${late.map(Math.round)} ms after expires_at`);
    assert.ok(
      late.every((ms) => ms <= 1000),
      `refused ${late.map(Math.round)} ms after expires_at`,
    );
  });
});
