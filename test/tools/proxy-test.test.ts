import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { socketProbe } from "../../src/domain/tools/socket-probe";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, env, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";

// The gateway here is test/tools/fake-gateway.ts: the local gateway's protocol code, whose stubbed API decides by
// the password ("wrong" 407, "disabled" 403, "exhausted" 402, "busy" 429, "hang" never answers, else allow).

let owner: TestAccount;
let other: TestAccount;
let name: string;
let subuserId: string;

beforeAll(async () => {
  owner = await createAccount();
  other = await createAccount();
  const subuser = await createSubuser(owner, { products: ["residential", "mobile"] });
  name = subuser.name;
  subuserId = subuser.id;
});

afterEach(() => {
  vi.useRealTimers();
});

function proxyTest(body: Record<string, unknown>, account: TestAccount | { token: string } = owner) {
  return call("POST", "/v1/tools/proxy-test", { token: account.token, body });
}

async function run(body: Record<string, unknown>) {
  const response = await proxyTest(body);
  expect(response.status).toBe(201);
  return json(response);
}

describe("POST /tools/proxy-test through the gateway", () => {
  it("an admitted CONNECT test reports auth_ok, the exit from the gateway's headers, each phase's time and the parsed username", async () => {
    const result = await run({
      username: username(name, "type-res-region-us-state-ca-city-la-session-abc1-sesstime-10"),
      password: "anything",
    });
    expect(result).toMatchObject({
      auth_ok: true,
      status: 200,
      error_code: null,
      protocol: "http",
      target: "http://echo.gateway.local/echo",
      target_status: 200,
      exit_geo: { country: "de", state: "be", city: "berlin" },
      exit_asn: 3320,
      parsed: {
        subuser: subuserId,
        type: "res",
        region: "us",
        state: "ca",
        city: "la",
        session_id: "abc1",
        sesstime: 10,
        asn: null,
      },
    });
    expect(result.id).toMatch(/^pxt_[0-9A-Z]{26}$/);
    expect(result.exit_ip).toMatch(/^198\.51\.100\.\d{1,3}$/);
    expect(result.latency_ms.connect).toBeGreaterThanOrEqual(0);
    expect(result.latency_ms.ttfb).toBeGreaterThanOrEqual(0);
    expect(result.latency_ms.tls).toBeNull();
    expect(result.latency_ms.total).toBeGreaterThanOrEqual(result.latency_ms.ttfb);
    expect(Date.parse(result.expires_at) - Date.parse(result.created_at)).toBe(24 * 3600 * 1000);
  });

  it("a SOCKS5 test reads the exit from the echo endpoint's body (SOCKS has no headers)", async () => {
    const result = await run({ username: username(name), password: "anything", protocol: "socks5" });
    expect(result).toMatchObject({
      auth_ok: true,
      status: 200,
      protocol: "socks5",
      target_status: 200,
      exit_asn: 3320,
    });
    expect(result.exit_ip).toMatch(/^198\.51\.100\.\d{1,3}$/);
    expect(result.parsed).toMatchObject({ type: "res", region: "us", state: null, session_id: null });
  });

  it("a custom target is requested through the tunnel and its status reported", async () => {
    const result = await run({ username: username(name), password: "anything", target: env.TEST_PROXY_TARGET });
    expect(result).toMatchObject({ auth_ok: true, status: 200, target: env.TEST_PROXY_TARGET, target_status: 200 });
    expect(result.exit_ip).toMatch(/^198\.51\.100\./);
  });

  for (const protocol of ["http", "socks5"]) {
    it(`a 407 from the gateway is auth_ok: false with its code (${protocol})`, async () => {
      const result = await run({ username: username(name), password: "wrong", protocol });
      expect(result).toMatchObject({ auth_ok: false, status: 407, error_code: "auth-failed", exit_ip: null });
      expect(result.latency_ms.ttfb).toBeNull();
    });

    it(`a 403 keeps auth_ok and carries the gateway's status and code (${protocol})`, async () => {
      const result = await run({ username: username(name), password: "disabled", protocol });
      expect(result).toMatchObject({ auth_ok: true, status: 403, error_code: "subuser-disabled", exit_ip: null });
    });

    it(`a 429 carries rps-limit and service code 30002 (${protocol})`, async () => {
      const result = await run({ username: username(name), password: "busy", protocol });
      expect(result).toMatchObject({ auth_ok: true, status: 429, error_code: "rps-limit", service_code: 30002 });
    });
  }

  it("a 429 over CONNECT also carries the gateway's Retry-After", async () => {
    const result = await run({ username: username(name), password: "busy" });
    expect(result.retry_after_s).toBe(2);
  });

  for (const protocol of ["http", "socks5"]) {
    it(`a target the gateway will not forward to is its 502 target-not-allowed (${protocol})`, async () => {
      const result = await run({ username: username(name), password: "x", protocol, target: "http://example.com/" });
      expect(result).toMatchObject({
        auth_ok: true,
        status: 502,
        error_code: "target-not-allowed",
        target_status: null,
      });
    });
  }

  it("SOCKS5's one ruleset reply is named 403 target-denied when the sub-user's target rules deny the target", async () => {
    const ruled = await createSubuser(owner);
    const rules = { mode: "deny", domains: ["example.com"], ip_ranges: [] };
    const set = await call("PATCH", `/v1/subusers/${ruled.id}`, { token: owner.token, body: { target_rules: rules } });
    expect(set.status).toBe(200);
    const target = "http://www.example.com/";
    const result = await run({ username: username(ruled.name), password: "x", protocol: "socks5", target });
    expect(result).toMatchObject({ status: 403, error_code: "target-denied" });
    const elsewhere = await run({
      username: username(ruled.name),
      password: "x",
      protocol: "socks5",
      target: "http://example.org/",
    });
    expect(elsewhere).toMatchObject({ status: 502, error_code: "target-not-allowed" });
  });

  it("a 402 carries the gateway's status and code", async () => {
    const result = await run({ username: username(name), password: "exhausted" });
    expect(result).toMatchObject({ auth_ok: true, status: 402, error_code: "bandwidth-exhausted" });
  });

  it("a gateway that does not answer in time ends the test with error_code timeout", async () => {
    const result = await run({ username: username(name), password: "hang" });
    expect(result).toMatchObject({ auth_ok: false, status: null, error_code: "timeout" });
    expect(result.latency_ms.connect).toBeGreaterThanOrEqual(0);
    expect(result.latency_ms.total).toBeGreaterThanOrEqual(1400);
  });

  it("a username grammar error answers at once with the gateway's 400 code, without connecting", async () => {
    const noRegion = await run({ username: `user_${name}-type-res`, password: "anything" });
    expect(noRegion).toMatchObject({
      auth_ok: false,
      status: 400,
      error_code: "bad-username",
      latency_ms: { connect: null, tls: null, ttfb: null, total: 0 },
      parsed: { subuser: null, type: null, region: null },
    });
    const badRegion = await run({ username: username("nosuchname", "type-res-region-zz"), password: "x" });
    expect(badRegion).toMatchObject({ status: 400, error_code: "unknown-region", latency_ms: { connect: null } });
  });

  it("another account's sub-user, or none, is 404 subuser_not_found", async () => {
    for (const [account, user] of [
      [other, username(name)],
      [owner, username("s0nosuchuser")],
    ] as const) {
      const response = await proxyTest({ username: user, password: "anything" }, account);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("subuser_not_found");
    }
  });

  it("a key whose scope does not cover the username's product is 403 subuser_scope_mismatch", async () => {
    const mobileKey = await issueKey(owner.id, ["mobile"]);
    const response = await proxyTest({ username: username(name), password: "anything" }, mobileKey);
    expect(response.status).toBe(403);
    expect((await json(response)).code).toBe("subuser_scope_mismatch");
  });

  it("bad input is 422: no password, a non-http or credentialed target, an unknown protocol, a colon or over 255 characters in the username", async () => {
    for (const body of [
      { username: username(name) },
      { username: username(name), password: "x", target: "ftp://example.com/" },
      { username: username(name), password: "x", target: "http://user:pw@example.com/" },
      { username: username(name), password: "x", protocol: "socks4" },
      { username: `${username(name)}:x`, password: "x" },
      { username: username(name, `type-res-region-us-city-${"a".repeat(300)}`), password: "x" },
    ]) {
      const response = await proxyTest(body);
      expect(response.status).toBe(422);
    }
  });

  it("the password is never stored", async () => {
    const secret = "never-stored-Zq81";
    const result = await run({ username: username(name), password: secret });
    const row = await env.DB.prepare("SELECT * FROM proxy_tests WHERE id = ?").bind(result.id).first();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(secret);
  });
});

describe("GET /tools/proxy-tests: runs kept 24 hours", () => {
  it("lists the account's runs newest first and reads one; another account sees none of them", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const first = await json(await proxyTest({ username: username(subuser.name), password: "a" }, account));
    const second = await json(await proxyTest({ username: username(subuser.name), password: "wrong" }, account));

    const page = await json(await call("GET", "/v1/tools/proxy-tests?limit=1", { token: account.token }));
    expect(page.data.map((run: { id: string }) => run.id)).toEqual([second.id]);
    const next = await json(
      await call("GET", `/v1/tools/proxy-tests?limit=1&cursor=${page.next_cursor}`, { token: account.token }),
    );
    expect(next.data.map((run: { id: string }) => run.id)).toEqual([first.id]);

    const one = await call("GET", `/v1/tools/proxy-tests/${first.id}`, { token: account.token });
    expect(one.status).toBe(200);
    expect(await json(one)).toEqual(first);

    const foreign = await call("GET", `/v1/tools/proxy-tests/${first.id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("proxy_test_not_found");
    const theirs = await json(await call("GET", "/v1/tools/proxy-tests", { token: other.token }));
    expect(theirs.data.map((run: { id: string }) => run.id)).not.toContain(first.id);
  });

  it("a run is gone after 24 hours, and the cron deletes it", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const made = await json(await proxyTest({ username: username(subuser.name), password: "a" }, account));

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(made.created_at) + 24 * 3600 * 1000 - 1000);
    expect((await call("GET", `/v1/tools/proxy-tests/${made.id}`, { token: account.token })).status).toBe(200);

    vi.setSystemTime(Date.parse(made.created_at) + 24 * 3600 * 1000 + 1000);
    const gone = await call("GET", `/v1/tools/proxy-tests/${made.id}`, { token: account.token });
    expect(gone.status).toBe(404);
    expect((await json(gone)).code).toBe("proxy_test_not_found");
    expect((await json(await call("GET", "/v1/tools/proxy-tests", { token: account.token }))).data).toEqual([]);

    await runCron(Date.now());
    const row = await env.DB.prepare("SELECT id FROM proxy_tests WHERE id = ?").bind(made.id).first();
    expect(row).toBeNull();
  });

  it("an id that is not a proxy test id is 404 proxy_test_not_found", async () => {
    const response = await call("GET", "/v1/tools/proxy-tests/sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", { token: owner.token });
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe("proxy_test_not_found");
  });
});

describe("socketProbe (unit)", () => {
  it("a gateway that refuses the TCP connection is gateway-unreachable, with no status", async () => {
    const probe = socketProbe({ hostname: "127.0.0.1", port: 1 });
    const outcome = await probe.run({
      username: "user_x-type-res-region-us",
      password: "p",
      protocol: "http",
      target: new URL("http://echo.gateway.local/echo"),
      timeoutMs: 2000,
    });
    expect(outcome).toMatchObject({ status: null, errorCode: "gateway-unreachable", exit: null });
  });
});

describe("GET /gateway: the gateway's connection settings", () => {
  it("tells any key where the gateway listens, the username prefix and the longest sessions, as the proxy test uses them", async () => {
    const narrow = await json(
      await call("POST", "/v1/api-keys", { token: owner.token, body: { scopes: { billing: "read" } } }),
    );
    const response = await call("GET", "/v1/gateway", { token: narrow.token });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      host: env.GATEWAY_HOST,
      port: Number(env.GATEWAY_PORT),
      username_prefix: env.GATEWAY_USER_PREFIX,
      max_sesstime_minutes: { residential: 30, mobile: 60 },
    });
  });
});
