// The gateway tests' world: `wrangler dev` on a free port with its own state, one or more local gateway nodes in front
// of it, a loopback target, and small clients for the three protocols.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { adminCall, prepare, startWorker } from "../../scripts/lib/local-worker.mjs";
import type { Gateway } from "../index.ts";
import { startLocalNode } from "../local-node.ts";

/** A sub-user as `POST /v1/subusers` answers it, as far as the tests read it. */
export interface Subuser {
  id: string;
  name: string;
  password: string;
}

/** A local node as the harness started it: with its credential, for a restart. */
export type LocalNode = Gateway & { token: string };

const portOf = (server: net.Server) => (server.address() as AddressInfo).port;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = portOf(server);
      server.close(() => resolve(port));
    });
  });
}

/** Answers every request with 200 and a small body, so bytes are easy to check; `?bytes=n`: a body of n bytes. */
function startTarget(): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const bytes = Number(new URL(request.url ?? "/", "http://target").searchParams.get("bytes") ?? Number.NaN);
      response.writeHead(200, { "Content-Type": "text/plain" });
      response.end(Number.isInteger(bytes) && bytes >= 0 ? "x".repeat(bytes) : "target says hello\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/**
 * `nodes`: how many gateway nodes to start (each on its own port, with its own node id); `gatewayPort` is the first.
 * `slots`: the fleet's node slots (`GATEWAY_SLOTS`; one a node unless given).
 */
export async function startStack({ nodes = 1, slots = nodes }: { nodes?: number; slots?: number } = {}) {
  const state = mkdtempSync(path.join(tmpdir(), "gateway-test-"));
  const vars = prepare({ persistTo: state });
  // The gateways' ports are chosen first so the worker names the first (GET /v1/gateway, the proxy test) as it is.
  const gatewayPorts: number[] = [];
  for (let i = 0; i < nodes; i++) gatewayPorts.push(await freePort());
  const { child, base } = await startWorker(await freePort(), {
    quiet: true,
    persistTo: state,
    vars: {
      LOG_REQUESTS: "false",
      ISP_PROVISIONING_DELAY_S: "0",
      ISP_LONG_TAIL_PROVISIONING_DELAY_S: "0",
      GATEWAY_PORT: String(gatewayPorts[0]),
      GATEWAY_SLOTS: String(slots),
    },
  });
  const gateways: LocalNode[] = await Promise.all(
    gatewayPorts.map((port, index) =>
      startLocalNode({
        port,
        apiOrigin: base,
        adminToken: vars.ADMIN_TOKEN,
        flushMs: 100,
        nodeId: `test-node-${index + 1}`,
      }),
    ),
  );
  const nodeAt = (index: number): LocalNode => {
    const node = gateways[index];
    if (!node) throw new Error(`no node ${index + 1}`);
    return node;
  };
  const first = nodeAt(0);
  const target = await startTarget();
  const runCron = () => fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}`);
  return {
    base,
    gatewayPort: first.port,
    gateways,
    targetUrl: `http://127.0.0.1:${portOf(target)}/hello`,
    targetPort: portOf(target),
    admin: (method: string, route: string, body?: object) => adminCall(base, vars.ADMIN_TOKEN, method, route, body),
    /** The newest mail the worker kept in its local outbox for `to` (an invitation, a password reset), or null. */
    async lastMailTo(to: string): Promise<{ subject: string; text: string } | null> {
      const response = await fetch(`${base}/internal/dev/outbox?to=${encodeURIComponent(to)}&limit=1`, {
        headers: { Authorization: `Bearer ${vars.ADMIN_TOKEN}` },
      });
      if (!response.ok) throw new Error(`outbox: ${response.status} ${await response.text()}`);
      const { data } = (await response.json()) as { data: { subject: string; text: string }[] };
      return data[0] ?? null;
    },
    /** A new `pro` account with $100 and 1 GB of residential traffic bought; resolves with its API key. */
    async fundedAccount(label: string): Promise<string> {
      const account = await adminCall(base, vars.ADMIN_TOKEN, "POST", "/accounts", {
        email: `${label}-${Date.now()}@example.com`,
        plan: "pro",
        balance_usd: 100,
      });
      const { token } = await adminCall(base, vars.ADMIN_TOKEN, "POST", `/accounts/${account.id}/api-keys`, {});
      const order = await v1(base, token, "POST", "/orders", { product: "residential", gb: 1 });
      if (order.status !== 201) throw new Error(`order: ${order.status} ${JSON.stringify(order.body)}`);
      return token;
    },
    /** Node `index` (its current process). */
    node: nodeAt,
    /** A new sub-user of the account of `token` (residential unless `body` says otherwise), labelled `{label}-…`. */
    async createSubuser(token: string, label: string, body: object = {}): Promise<Subuser> {
      const created = await v1(base, token, "POST", "/subusers", {
        label: `${label}-${Math.random().toString(36).slice(2, 10)}`,
        products: ["residential"],
        ...body,
      });
      if (created.status !== 201) throw new Error(`sub-user: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body;
    },
    /**
     * Kills node `index` (as the soak does: listeners and connections closed, usage sent) and starts a new process
     * of it `downMs` later, with the same node id and port; resolves with the new node once it listens.
     */
    async restartNode(index: number, downMs = 0): Promise<LocalNode> {
      const old = nodeAt(index);
      await old.close();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      const restarted = await startLocalNode({
        port: old.port,
        apiOrigin: base,
        token: old.token,
        flushMs: 100,
        nodeId: old.nodeId,
      });
      gateways[index] = restarted;
      return restarted;
    },
    /** Runs the Cron Trigger's jobs once (wrangler dev never fires them by itself). */
    runCron,
    /** An ISP batch of 5 IPs (US, New York, AS7922) for the ISP sub-user `subuserId`, once active; resolves its id. */
    async activeIspBatch(token: string, subuserId: string): Promise<string> {
      const order = await v1(base, token, "POST", "/orders", {
        product: "isp",
        country: "US",
        city: "newyork",
        asn: 7922,
        quantity: 5,
        months: 1,
        subuser: subuserId,
      });
      if (order.status !== 201) throw new Error(`ISP order: ${order.status} ${JSON.stringify(order.body)}`);
      const batchId: string = order.body.details.batch_id;
      await eventually(async () => {
        await runCron();
        return (await v1(base, token, "GET", `/isp/batches/${batchId}`)).body.status === "active";
      });
      return batchId;
    },
    async stop() {
      target.close();
      await Promise.all(gateways.map((gateway) => gateway.close()));
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** The world `startStack` starts. */
export type Stack = Awaited<ReturnType<typeof startStack>>;

/** A `/v1` call with an API key; returns the parsed body and status. */
export async function v1(
  base: string,
  token: string,
  method: string,
  route: string,
  body?: object,
  // The answers' shapes are the public API's, read loosely by the tests.
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}/v1${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

/** A plain HTTP proxy request (absolute-form URL) on a new connection. */
export function proxiedGet(
  port: number,
  {
    username,
    password,
    url,
    headers = {},
  }: { username: string; password: string; url: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: "127.0.0.1",
      port,
      path: url,
      agent: false,
      headers: { Host: new URL(url).host, "Proxy-Authorization": basic(username, password), ...headers },
    });
    request.on("response", (response) => {
      let body = "";
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

/** Opens a CONNECT tunnel; resolves with the answer and the socket (left open for the caller). */
export function connectTunnel(
  port: number,
  { username, password, authority }: { username: string; password: string; authority: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: "127.0.0.1",
      port,
      method: "CONNECT",
      path: authority,
      agent: false,
      headers: { "Proxy-Authorization": basic(username, password) },
    });
    request.on("connect", (response: http.IncomingMessage, socket: net.Socket) =>
      resolve({ status: response.statusCode ?? 0, headers: response.headers, socket }),
    );
    request.on("error", reject);
    request.end();
  });
}

/** One GET through an open tunnel socket; resolves with the raw answer once the target closes. */
export function getThrough(socket: net.Socket, host: string): Promise<string> {
  return new Promise((resolve) => {
    let raw = "";
    socket.on("data", (chunk: Buffer) => {
      raw += chunk;
    });
    socket.on("end", () => resolve(raw));
    socket.write(`GET /hello HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** A SOCKS5 handshake with user/password; resolves `{authStatus}` or `{authStatus: 0, reply, socket}`. */
export function socks5Connect(
  port: number,
  { username, password, host, targetPort }: { username: string; password: string; host: string; targetPort: number },
): Promise<{ authStatus: number | undefined; reply?: number | undefined; socket?: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let buffered = Buffer.alloc(0);
    let step = 0;
    socket.on("error", reject);
    socket.on("connect", () => socket.write(Buffer.from([5, 1, 2])));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (step === 0 && buffered.length >= 2) {
        buffered = buffered.subarray(2);
        step = 1;
        const user = Buffer.from(username);
        const pass = Buffer.from(password);
        socket.write(Buffer.concat([Buffer.from([1, user.length]), user, Buffer.from([pass.length]), pass]));
      }
      if (step === 1 && buffered.length >= 2) {
        const authStatus = buffered[1];
        buffered = buffered.subarray(2);
        if (authStatus !== 0) return resolve({ authStatus });
        step = 2;
        const name = Buffer.from(host);
        socket.write(
          Buffer.concat([
            Buffer.from([5, 1, 0, 3, name.length]),
            name,
            Buffer.from([targetPort >> 8, targetPort & 255]),
          ]),
        );
      }
      if (step === 2 && buffered.length >= 10) {
        step = 3;
        socket.removeAllListeners("data");
        resolve({ authStatus: 0, reply: buffered[1], socket });
      }
    });
  });
}

/** Polls `request` every 50 ms until `done(answer)`; resolves with the time taken (ms), or Infinity past `limitMs`. */
export async function timeUntil<T>(
  request: () => Promise<T>,
  done: (answer: T) => boolean,
  { limitMs = 5000 } = {},
): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (done(await request())) return performance.now() - started;
    if (performance.now() - started > limitMs) return Infinity;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls `check` until it returns a truthy value (at most `ms`). */
export async function eventually<T>(
  check: () => T | Promise<T>,
  ms = 15_000,
): Promise<Exclude<T, false | 0 | "" | null | undefined>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | 0 | "" | null | undefined>;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
