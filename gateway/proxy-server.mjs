// One port, three protocols: plain HTTP proxy requests, HTTP CONNECT tunnels and SOCKS5. Every request is decided
// by the decider (node-decider.mjs: at the node, from what the API hands it; ISP asks the API); refusals carry the
// spec's status and `X-Service-Error-Code`; admitted requests get the exit headers and are reported as usage. With no
// internet here, only loopback targets are forwarded; the echo host (`echo.gateway.local` by default) is answered by
// the gateway itself and uses no credit.
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import { chooseExit, echoBody, exitHeaders } from "./exits.mjs";
import { handleSocks5, REPLY } from "./socks5.mjs";

export const ECHO_HOST = "echo.gateway.local";
const TAG_HEADER = "x-proxy-tag";
/** Local stand-in for addressing an ISP IP directly: the batch IP the client means (HTTP and CONNECT). */
const ISP_IP_HEADER = "x-isp-ip";
/** Local stand-in for the upstream network reassigning a sticky session's exit. */
const REPIN_HEADER = "x-simulate-repin";
const GATEWAY_HEADERS = [
  "proxy-authorization",
  "proxy-connection",
  "connection",
  "keep-alive",
  TAG_HEADER,
  ISP_IP_HEADER,
  REPIN_HEADER,
];
const STATUS_TEXT = {
  400: "Bad Request",
  402: "Payment Required",
  403: "Forbidden",
  407: "Proxy Authentication Required",
};

const SOCKS_REPLIES = { "target-not-allowed": REPLY.notAllowed, "upstream-unreachable": REPLY.hostUnreachable };

const newRequestId = () => `req_${Date.now().toString(36)}${randomBytes(8).toString("hex")}`;

export function isLoopback(host) {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function basicCredentials(header) {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? "");
  if (!match) return null;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0
    ? { username: decoded, password: "" }
    : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The listener the username addresses; the decider checks the grammar. */
function productOf(username, destIp) {
  if (destIp) return "isp";
  return /-type-mob(-|$)/.test(username) ? "mobile" : "residential";
}

function tagOf(value) {
  const tag = typeof value === "string" ? value.toLowerCase() : "";
  return /^[a-z0-9_-]{1,64}$/.test(tag) ? tag : null;
}

function refusalHeaders(decision) {
  const headers = { "X-Service-Error-Code": decision.error_code, "Content-Type": "text/plain" };
  if (decision.status === 407) headers["Proxy-Authenticate"] = 'Basic realm="proxy"';
  if (decision.status === 429) {
    headers["Retry-After"] = String(decision.retry_after_s ?? 1);
    headers["X-Service-Code"] = String(decision.service_code ?? 30002);
  }
  return headers;
}

function rawResponse(status, reason, headers) {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${status} ${reason}\r\n${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * `decider`: `connection(sourceIp)` → `{decide(credentials), useExit(exit, decision), watch(onRevoked), close()}`
 * (node-decider.mjs, or a stub); `usage`: a reporter with `add(record)`; `allowTarget(host)`: which hosts may be
 * forwarded to (loopback by default).
 */
export function createProxyServer({ decider, usage, echoHost = ECHO_HOST, allowTarget = isLoopback }) {
  const connections = new WeakMap();
  const echoContexts = new WeakMap();
  let connectionCount = 0;

  function connectionOf(socket) {
    let state = connections.get(socket);
    if (!state) {
      const sourceIp = (socket.remoteAddress ?? "127.0.0.1").replace(/^::ffff:/, "");
      state = { auth: decider.connection(sourceIp), sourceIp, seed: `${process.pid}:${++connectionCount}` };
      connections.set(socket, state);
      socket.once("close", () => state.auth.close());
    }
    return state;
  }

  /** Decides a request on a connection; on an allow, picks its exit. */
  async function admit(socket, { username, password, destIp, repin = false }) {
    if (!username) return { decision: { allow: false, status: 407, error_code: "auth-failed" } };
    const state = connectionOf(socket);
    const credentials = { username, password, product: productOf(username, destIp), destIp };
    const decision = await state.auth.decide(credentials);
    if (!decision.allow) return { decision };
    const exit = chooseExit(decision, { connectionSeed: state.seed, repin });
    state.auth.useExit(exit, decision);
    const clientIp = state.sourceIp;
    return { decision, exit, requestId: newRequestId(), username, destIp: destIp ?? null, clientIp };
  }

  function report(admission, { method, targetHost, status, bytesIn, bytesOut, tag, errorCode = null }) {
    const { decision, exit } = admission;
    usage.add({
      request_id: admission.requestId,
      ts: new Date().toISOString(),
      product: decision.product,
      username: admission.username,
      dest_ip: admission.destIp,
      method,
      target_host: targetHost,
      status,
      bytes_in: bytesIn,
      bytes_out: bytesOut,
      exit_ip: exit.ip,
      exit_geo: exit.geo,
      exit_asn: exit.asn,
      carrier_name: exit.carrier,
      tag,
      error_code: errorCode,
      repinned: exit.repinned,
      client_ip: admission.clientIp,
      // A sticky session's records name it: its usage is added to it with no call to its sub-user's gate.
      session: decision.session?.id ?? null,
    });
  }

  // ── The echo endpoint: answered by the gateway, no credit used ─────────────────────────────────────────

  function answerEcho(res, admission, path) {
    const body = path === "/healthz" ? { status: "ok" } : echoBody(admission.exit, admission.requestId);
    res.writeHead(200, { "Content-Type": "application/json", ...exitHeaders(admission.exit, admission.requestId) });
    res.end(JSON.stringify(body));
  }
  const echoServer = http.createServer((req, res) => answerEcho(res, echoContexts.get(req.socket), req.url));

  // ── Tunnels (CONNECT and SOCKS5) ───────────────────────────────────────────────────────────────────

  /** `open(errorCode | null)` answers the client; then bytes flow both ways until either side closes. */
  function tunnel(client, admission, { host, port, head, tag, open }) {
    if (host === echoHost) {
      echoContexts.set(client, admission);
      open(null);
      if (head.length) client.unshift(head);
      echoServer.emit("connection", client);
      client.resume();
      return;
    }
    if (!allowTarget(host)) return open("target-not-allowed");
    const upstream = net.connect(port, host);
    let opened = false;
    let failure = null;
    upstream.once("connect", () => {
      opened = true;
      open(null);
      // A tunnel shows no requests: it is closed once its sub-user no longer admits it.
      connectionOf(client).auth.watch(() => upstream.destroy());
      if (head.length) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.once("error", () => {
      failure = opened ? "upstream-error" : "upstream-unreachable";
    });
    upstream.once("close", () => {
      if (opened) client.end();
      else open("upstream-unreachable");
      report(admission, {
        method: "CONNECT",
        targetHost: host,
        status: opened ? 200 : 502,
        bytesIn: upstream.bytesRead,
        bytesOut: upstream.bytesWritten,
        tag,
        errorCode: failure,
      });
    });
    client.once("error", () => upstream.destroy());
    client.once("close", () => upstream.destroy());
  }

  async function onConnect(req, client, head) {
    client.pause();
    const [host, port] = splitHostPort(req.url);
    const admission = await admit(client, {
      ...basicCredentials(req.headers["proxy-authorization"]),
      destIp: req.headers[ISP_IP_HEADER],
      repin: req.headers[REPIN_HEADER] === "true",
    });
    const { decision } = admission;
    if (!decision.allow) {
      const reason = STATUS_TEXT[decision.status] ?? "Refused";
      client.end(rawResponse(decision.status, reason, { ...refusalHeaders(decision), "Content-Length": "0" }));
      return;
    }
    tunnel(client, admission, {
      host,
      port,
      head,
      tag: tagOf(req.headers[TAG_HEADER]),
      open: (errorCode) => {
        if (errorCode) {
          client.end(rawResponse(502, "Bad Gateway", { "X-Service-Error-Code": errorCode, "Content-Length": "0" }));
          return;
        }
        const headers = exitHeaders(admission.exit, admission.requestId);
        client.write(rawResponse(200, "Connection Established", headers));
      },
    });
  }

  function onSocks(socket, first) {
    let admission;
    handleSocks5(socket, first, {
      admit: async (credentials) => {
        admission = await admit(socket, credentials);
        return admission.decision.allow ? { ok: true } : { ok: false, errorCode: admission.decision.error_code };
      },
      tunnel: ({ host, port, reply, rest }) =>
        tunnel(socket, admission, {
          host,
          port,
          head: rest,
          tag: null,
          open: (errorCode) => reply(SOCKS_REPLIES[errorCode] ?? REPLY.succeeded),
        }),
    });
  }

  // ── Plain HTTP proxy requests ──────────────────────────────────────────────────────────────────────

  async function onRequest(req, res) {
    if (req.url.startsWith("/")) return answerDirect(req, res);
    if (!URL.canParse(req.url)) {
      res.writeHead(400, { "Content-Type": "text/plain" });
      res.end("Not an absolute URL.\n");
      return;
    }
    const target = new URL(req.url);
    const admission = await admit(req.socket, {
      ...basicCredentials(req.headers["proxy-authorization"]),
      destIp: req.headers[ISP_IP_HEADER],
      repin: req.headers[REPIN_HEADER] === "true",
    });
    const { decision } = admission;
    if (!decision.allow) {
      res.writeHead(decision.status, refusalHeaders(decision));
      res.end(`${decision.error_code}\n`);
      return;
    }
    if (target.hostname === echoHost) return answerEcho(res, admission, target.pathname);
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (!allowTarget(host)) {
      res.writeHead(502, { "X-Service-Error-Code": "target-not-allowed", "Content-Type": "text/plain" });
      res.end("The local gateway forwards to loopback targets only.\n");
      return;
    }
    forward(req, res, admission, { host, port: Number(target.port) || 80, path: `${target.pathname}${target.search}` });
  }

  function forward(req, res, admission, { host, port, path }) {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !GATEWAY_HEADERS.includes(name)));
    const upstream = http.request({ host, port, path, method: req.method, headers, agent: false });
    let socket = null;
    upstream.once("socket", (opened) => {
      socket = opened;
    });
    const tag = tagOf(req.headers[TAG_HEADER]);
    const fields = { method: req.method, targetHost: host, tag };
    upstream.on("response", (answer) => {
      const chunks = [];
      answer.on("data", (chunk) => chunks.push(chunk));
      answer.on("end", () => {
        const bytes = { in: socket?.bytesRead ?? 0, out: socket?.bytesWritten ?? 0 };
        const answerHeaders = { ...answer.headers };
        delete answerHeaders.connection;
        delete answerHeaders["keep-alive"];
        delete answerHeaders["transfer-encoding"];
        res.writeHead(answer.statusCode, {
          ...answerHeaders,
          ...exitHeaders(admission.exit, admission.requestId, bytes),
        });
        res.end(Buffer.concat(chunks));
        report(admission, { ...fields, status: answer.statusCode, bytesIn: bytes.in, bytesOut: bytes.out });
      });
    });
    upstream.on("error", () => {
      if (res.headersSent) return res.destroy();
      res.writeHead(502, {
        "X-Service-Error-Code": "upstream-unreachable",
        "X-Gateway-Request-Id": admission.requestId,
      });
      res.end();
      report(admission, { ...fields, status: 502, bytesIn: 0, bytesOut: 0, errorCode: "upstream-unreachable" });
    });
    req.pipe(upstream);
  }

  function answerDirect(req, res) {
    if (req.url === "/healthz") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("This is a proxy: send absolute-form requests, CONNECT or SOCKS5.\n");
  }

  // A failure inside a handler closes that one connection, never the gateway.
  const httpServer = http.createServer((req, res) => onRequest(req, res).catch(() => req.socket.destroy()));
  httpServer.on("connect", (req, client, head) => onConnect(req, client, head).catch(() => client.destroy()));

  return net.createServer((socket) => {
    socket.once("error", () => socket.destroy());
    socket.once("data", (first) => {
      socket.pause();
      if (first[0] === 0x05) return onSocks(socket, first);
      socket.unshift(first);
      httpServer.emit("connection", socket);
      socket.resume();
    });
  });
}

function splitHostPort(authority) {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(authority ?? "");
  return match ? [match[1], Number(match[2])] : [authority, 443];
}
