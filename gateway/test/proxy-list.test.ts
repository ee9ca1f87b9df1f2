// The API's proxy lists against the local gateway: every line of a downloaded list parses with the username grammar
// the gateway nodes run, and works through the gateway once the caller puts the password in.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PASSWORD_PLACEHOLDER } from "../../src/domain/gateway/proxy-lines.ts";
import { parseUsername } from "../../src/domain/gateway/username.ts";
import { proxiedGet, type Stack, type Subuser, socks5Connect, startStack } from "./harness.ts";

const STICKY_LINES = 1000;
/** Requests in flight while every line of the list is tried: well within a Pro sub-user's limits. */
const IN_FLIGHT = 25;

let stack: Stack;
let token: string;

before(async () => {
  stack = await startStack();
  token = await stack.fundedAccount("lists");
});

after(async () => {
  await stack?.stop();
});

async function download(path: string): Promise<{ response: Response; lines: string[] }> {
  const response = await fetch(`${stack.base}/v1${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return { response, lines: text.split("\n").slice(0, -1) };
}

/** `host:port:username:password` with the password put in, as a customer does. */
function login(line: string, subuser: Subuser) {
  const [host, port, username, password] = line.split(":");
  assert.equal(`${host}:${port}`, `127.0.0.1:${stack.gatewayPort}`);
  assert.equal(password, PASSWORD_PLACEHOLDER);
  return { port: Number(port), username: username as string, password: subuser.password };
}

/**
 * A request as a well-behaved client sends it: a 429 for the sub-user's limits (1,000 requests a second on Pro, which
 * 1,000 lines at full speed reach) is retried after its Retry-After; any other answer is returned.
 */
async function admittedGet(port: number, request: Parameters<typeof proxiedGet>[1]) {
  for (let attempt = 1; ; attempt++) {
    const answer = await proxiedGet(port, request);
    const retryable = ["rps-limit", "concurrent-limit"].includes(String(answer.headers["x-service-error-code"]));
    if (answer.status !== 429 || !retryable || attempt === 5) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers["retry-after"] ?? 1) * 1000));
  }
}

async function inParallel<T>(items: T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

describe("a proxy list through the local gateway", () => {
  it("1,000 sticky lines: each parses with the gateway's grammar as its own session, and each proxies a request", async () => {
    const subuser = await stack.createSubuser(token, "list");
    const { lines } = await download(
      `/subusers/${subuser.id}/proxy-list?country=us&state=ca&session=sticky&count=${STICKY_LINES}&sesstime=30`,
    );
    assert.equal(lines.length, STICKY_LINES);
    const sessions = new Set<string | null>();
    for (const line of lines) {
      const parsed = parseUsername(login(line, subuser).username, "user");
      assert.ok(parsed.ok, `${line}: ${parsed.ok || parsed.error}`);
      assert.equal(parsed.value.name, subuser.name);
      assert.deepEqual([parsed.value.target.region, parsed.value.target.state], ["us", "ca"]);
      assert.equal(parsed.value.target.sesstime, 30);
      sessions.add(parsed.value.target.sessionId);
    }
    assert.equal(sessions.size, STICKY_LINES);

    // Every line through the gateway's echo (it uses no credit): admitted, with the list's geo.
    const exits = new Map<string, string>();
    await inParallel(lines, IN_FLIGHT, async (line) => {
      const { port, ...credentials } = login(line, subuser);
      const answer = await admittedGet(port, { ...credentials, url: "http://echo.gateway.local/echo" });
      assert.equal(answer.status, 200, `${line}: ${answer.status} ${answer.headers["x-service-error-code"]}`);
      assert.match(String(answer.headers["x-gateway-exit-geo"]), /^us\/ca\//);
      exits.set(line, JSON.parse(answer.body).exit_ip);
    });
    assert.equal(exits.size, STICKY_LINES);

    // A few to the target itself; a sticky line keeps its exit.
    for (const line of lines.slice(0, 3)) {
      const { port, ...credentials } = login(line, subuser);
      const answer = await admittedGet(port, { ...credentials, url: stack.targetUrl });
      assert.equal(answer.status, 200);
      assert.equal(answer.body, "target says hello\n");
      assert.equal(answer.headers["x-gateway-exit-ip"], exits.get(line));
    }
  });

  it("socks5:// lines authenticate over SOCKS5; a rotating line is one username without a session", async () => {
    const subuser = await stack.createSubuser(token, "list-socks");
    const { lines } = await download(
      `/subusers/${subuser.id}/proxy-list?country=de&session=sticky&count=3&format=url&protocol=socks5`,
    );
    assert.equal(lines.length, 3);
    for (const line of lines) {
      const url = new URL(line);
      assert.equal(url.protocol, "socks5:");
      assert.equal(decodeURIComponent(url.password), PASSWORD_PLACEHOLDER);
      const answer = await socks5Connect(Number(url.port), {
        username: decodeURIComponent(url.username),
        password: subuser.password,
        host: "127.0.0.1",
        targetPort: stack.targetPort,
      });
      assert.equal(answer.authStatus, 0);
      assert.equal(answer.reply, 0);
      answer.socket?.destroy();
    }

    const rotating = await download(`/subusers/${subuser.id}/proxy-list?country=de`);
    assert.equal(rotating.lines.length, 1);
    const { port, ...credentials } = login(rotating.lines[0] as string, subuser);
    assert.equal(credentials.username, `user_${subuser.name}-type-res-region-de`);
    assert.equal((await proxiedGet(port, { ...credentials, url: stack.targetUrl })).status, 200);
  });

  it("an ISP batch's lines carry its password and are admitted on their IPs", async () => {
    const subuser = await stack.createSubuser(token, "list-isp", { products: ["isp"] });
    const batchId = await stack.activeIspBatch(token, subuser.id);
    const { lines } = await download(`/isp/batches/${batchId}/proxy-list`);
    assert.equal(lines.length, 5);
    for (const line of lines) {
      // The local gateway cannot listen on the batch's IPs: the IP goes in X-Isp-Ip, to the gateway's own port.
      const [ip, port, username, password] = line.split(":") as [string, string, string, string];
      assert.equal(port, "8000");
      const answer = await proxiedGet(stack.gatewayPort, {
        username,
        password,
        url: stack.targetUrl,
        headers: { "X-Isp-Ip": ip },
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["x-gateway-exit-ip"], ip);
    }
  });
});
