// The soak's loopback servers and its proxy clients. The target server answers proxied requests and counts the bytes
// of every connection it served, per sub-user and sticky session (the request's `x-soak-*` headers say whose it
// is: a sticky session by the soak's `track` of it, as one username may open several sessions); the receiver takes
// webhook deliveries, verifies their Standard Webhooks signatures and counts them.
import http from "node:http";
import { Webhook } from "standardwebhooks";

/** Request headers naming whose a proxied request is: what the target's counts are keyed by. */
const OWNER_HEADERS = { product: "x-soak-product", subuser: "x-soak-subuser", session: "x-soak-session" };

/**
 * The target server on 127.0.0.1 (a free port). `GET|POST /r?size=N` answers N bytes and closes the connection; the
 * bytes of each connection, as its socket counted them, are added to its owner's figures when it closes: `bytesIn`
 * what the target wrote (the gateway's `bytes_in`), `bytesOut` what it read (`bytes_out`).
 */
export async function startTarget() {
  const usage = new Map();
  const sessions = new Map();
  const unattributed = { connections: 0, bytes: 0 };
  const owners = new WeakMap();
  const add = (map, key, socket) => {
    const entry = map.get(key) ?? { bytesIn: 0, bytesOut: 0, requests: 0 };
    entry.bytesIn += socket.bytesWritten;
    entry.bytesOut += socket.bytesRead;
    entry.requests += 1;
    map.set(key, entry);
  };
  const server = http.createServer((req, res) => {
    const owner = {
      product: req.headers[OWNER_HEADERS.product],
      subuser: req.headers[OWNER_HEADERS.subuser],
      session: req.headers[OWNER_HEADERS.session] ?? null,
    };
    if (owner.product && owner.subuser) owners.set(req.socket, owner);
    const size = Math.min(Number(new URL(req.url, "http://target").searchParams.get("size")) || 0, 1_000_000);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size, Connection: "close" });
      res.end(Buffer.alloc(size, 120));
    });
  });
  server.on("connection", (socket) => {
    socket.once("close", () => {
      const owner = owners.get(socket);
      if (!owner) {
        unattributed.connections += 1;
        unattributed.bytes += socket.bytesRead + socket.bytesWritten;
        return;
      }
      add(usage, `${owner.product} ${owner.subuser}`, socket);
      if (owner.session) add(sessions, owner.session, socket);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    /** Per `product subuser`: bytes in and out and requests served. */
    usage,
    /** Per sticky session (the soak's `track`: `username#n`): the same. */
    sessions,
    unattributed,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * The webhook receiver on 127.0.0.1: `POST /events` (the account's webhook endpoint) and `POST /reports` (the reports'
 * webhook destination). Each path verifies signatures with its secret (set once known) and counts deliveries, the
 * distinct event ids per type, and those that failed verification. It answers 2xx to every delivery.
 */
export async function startReceiver() {
  const paths = new Map(
    ["/events", "/reports"].map((path) => [path, { secret: null, deliveries: 0, invalid: 0, ids: new Map() }]),
  );
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const counts = paths.get(req.url);
      if (!counts || req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString("utf8");
      counts.deliveries += 1;
      try {
        const event = new Webhook(counts.secret).verify(body, req.headers);
        const ids = counts.ids.get(event.type) ?? new Set();
        counts.ids.set(event.type, ids.add(event.id));
      } catch {
        counts.invalid += 1;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    url: (path) => `${origin}${path}`,
    setSecret: (path, secret) => {
      paths.get(path).secret = secret;
    },
    /** Deliveries, invalid signatures and distinct event ids of `type` received on `path`. */
    count: (path, type) => {
      const counts = paths.get(path);
      return { deliveries: counts.deliveries, invalid: counts.invalid, distinct: counts.ids.get(type)?.size ?? 0 };
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The headers that make a proxied request countable at the target. */
export function ownerHeaders({ product, subuser, session }) {
  const headers = { [OWNER_HEADERS.product]: product, [OWNER_HEADERS.subuser]: subuser };
  if (session) headers[OWNER_HEADERS.session] = session;
  return headers;
}

/** A refusal's error code and `Retry-After` (seconds), when the answer has them. */
function refusalOf(response) {
  const retryAfter = Number(response.headers["retry-after"]);
  return {
    errorCode: response.headers["x-service-error-code"] ?? null,
    retryAfterS: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  };
}

/** The exit a node's answer names (`X-Gateway-Exit-Ip`), if any. */
const exitOf = (response) => response.headers["x-gateway-exit-ip"] ?? null;

const basic = ({ username, password }) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;

/**
 * One HTTP proxy request through a gateway node (a new connection, absolute-form URL) to the target; resolves to
 * `{status, bytes, exitIp, errorCode, retryAfterS}` (the body's length; the exit the node named; a refusal's
 * `X-Service-Error-Code` and `Retry-After`), or rejects on a connection failure.
 */
export function proxiedRequest(node, target, { credentials, method, size, body, headers }) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port: node.port,
        method,
        path: `http://127.0.0.1:${target.port}/r?size=${size}`,
        agent: false,
        headers: { ...headers, "Proxy-Authorization": basic(credentials) },
        timeout: 30_000,
      },
      (response) => {
        let bytes = 0;
        response.on("data", (chunk) => {
          bytes += chunk.length;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode, bytes, exitIp: exitOf(response), ...refusalOf(response) }),
        );
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error("proxied request timed out")));
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * One request through a `CONNECT` tunnel of a gateway node: the tunnel's answer, then a GET sent through it to the
 * target. Resolves to `{status}`: the tunnel's refusal (with `errorCode`, `retryAfterS`), or the target's answer
 * (with `exitIp`, the exit the tunnel's answer named).
 */
export function tunnelledRequest(node, target, { credentials, size, headers }) {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: "127.0.0.1",
      port: node.port,
      method: "CONNECT",
      path: `127.0.0.1:${target.port}`,
      agent: false,
      headers: { "Proxy-Authorization": basic(credentials) },
      timeout: 30_000,
    });
    request.on("timeout", () => request.destroy(new Error("tunnel timed out")));
    request.on("error", reject);
    request.on("connect", (answer, socket) => {
      if (answer.statusCode !== 200) {
        socket.destroy();
        resolve({ status: answer.statusCode, ...refusalOf(answer) });
        return;
      }
      const lines = Object.entries({ Host: `127.0.0.1:${target.port}`, Connection: "close", ...headers });
      socket.write(
        `GET /r?size=${size} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join("\r\n")}\r\n\r\n`,
      );
      const chunks = [];
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("end", () => {
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).subarray(0, 20).toString())?.[1]);
        if (status) resolve({ status, exitIp: exitOf(answer) });
        else reject(new Error("no answer through the tunnel"));
      });
    });
    request.end();
  });
}
