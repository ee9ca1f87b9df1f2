// One port, three protocols: plain HTTP proxy requests, HTTP CONNECT tunnels and SOCKS5. Every request is decided
// by the decider (node-decider.ts: at the node, from what the API hands it; ISP asks the API); refusals carry the
// spec's status and `X-Service-Error-Code`; admitted requests get the exit headers and are reported as usage. With no
// internet here, only loopback targets are forwarded; the echo host (`echo.gateway.local` by default) is answered by
// the gateway itself and uses no credit.
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import { chooseExit, type Exit, echoBody, exitHeaders } from "./exits.ts";
import { handleSocks5, REPLY, type ReplyCode } from "./socks5.ts";
import type { Allowed, GatewayDecision, Refused, UsageRecord } from "./wire.ts";

/** What a client presents on a connection: the listener's product, and for ISP the addressed batch IP. */
export interface ProxyCredentials {
  username: string;
  password?: string | undefined;
  product: "residential" | "mobile" | "isp";
  /** ISP: the addressed batch IP. */
  destIp?: string | undefined;
  /** The upstream network lost a sticky session's exit (`X-Simulate-Repin`): the node gives it a new one. */
  repin?: boolean;
}

/** One client connection's decisions. */
export interface GatewayConnection {
  decide(credentials: ProxyCredentials): Promise<GatewayDecision>;
  /** The exit an allow's requests leave from. */
  useExit(exit: Exit, decision: Allowed): void;
  /** Whether the allow's target rules let a request reach `host` (403 target-denied when not). */
  reach(host: string, decision: Allowed): Refused | null;
  /** `onRevoked` closes the connection's tunnel once its sub-user no longer admits it. */
  watch(onRevoked: () => void): void;
  close(): void;
}

/** What decides the gateway's requests: node-decider.ts, or a stub of it. */
export interface GatewayDecider {
  connection(sourceIp: string): GatewayConnection;
}

/** What the proxy reports each admitted request to: usage-reporter.ts, or a stub. */
export interface UsageSink {
  add(record: UsageRecord): void;
}

/** A decided request: the decision, and for an allow its exit and what its usage record names. */
type Admission =
  | { decision: Refused }
  | {
      decision: Allowed;
      exit: Exit;
      requestId: string;
      username: string;
      destIp: string | null;
      clientIp: string;
    };
type Admitted = Extract<Admission, { exit: Exit }>;

/** A connection's state: its decisions, its client's address, and a seed that differs per connection. */
interface ConnectionState {
  auth: GatewayConnection;
  sourceIp: string;
  seed: string;
}

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
const STATUS_TEXT: Partial<Record<number, string>> = {
  400: "Bad Request",
  402: "Payment Required",
  403: "Forbidden",
  407: "Proxy Authentication Required",
};

const SOCKS_REPLIES: Partial<Record<string, ReplyCode>> = {
  "target-not-allowed": REPLY.notAllowed,
  "target-denied": REPLY.notAllowed,
  "upstream-unreachable": REPLY.hostUnreachable,
};

const newRequestId = () => `req_${Date.now().toString(36)}${randomBytes(8).toString("hex")}`;

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function basicCredentials(header: string | undefined): { username: string; password: string } | null {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? "");
  if (!match) return null;
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0
    ? { username: decoded, password: "" }
    : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The listener the username addresses; the decider checks the grammar. */
function productOf(username: string, destIp: string | undefined): ProxyCredentials["product"] {
  if (destIp) return "isp";
  return /-type-mob(-|$)/.test(username) ? "mobile" : "residential";
}

function tagOf(value: unknown): string | null {
  const tag = typeof value === "string" ? value.toLowerCase() : "";
  return /^[a-z0-9_-]{1,64}$/.test(tag) ? tag : null;
}

function refusalHeaders(decision: Refused): Record<string, string> {
  const headers: Record<string, string> = { "X-Service-Error-Code": decision.error_code, "Content-Type": "text/plain" };
  if (decision.status === 407) headers["Proxy-Authenticate"] = 'Basic realm="proxy"';
  if (decision.status === 429) {
    headers["Retry-After"] = String(decision.retry_after_s ?? 1);
    headers["X-Service-Code"] = String(decision.service_code ?? 30002);
  }
  return headers;
}

function rawResponse(status: number, reason: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${status} ${reason}\r\n${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * `decider`: `connection(sourceIp)` → `{decide(credentials), useExit(exit, decision), watch(onRevoked), close()}`
 * (node-decider.ts, or a stub); `usage`: a reporter with `add(record)`; `allowTarget(host)`: which hosts may be
 * forwarded to (loopback by default).
 */
export function createProxyServer({
  decider,
  usage,
  echoHost = ECHO_HOST,
  allowTarget = isLoopback,
}: {
  decider: GatewayDecider;
  usage: UsageSink;
  echoHost?: string;
  allowTarget?: (host: string) => boolean;
}): net.Server {
  const connections = new WeakMap<net.Socket, ConnectionState>();
  const echoContexts = new WeakMap<net.Socket, Admitted>();
  let connectionCount = 0;

  function connectionOf(socket: net.Socket): ConnectionState {
    let state = connections.get(socket);
    if (!state) {
      const sourceIp = (socket.remoteAddress ?? "127.0.0.1").replace(/^::ffff:/, "");
      const opened = { auth: decider.connection(sourceIp), sourceIp, seed: `${process.pid}:${++connectionCount}` };
      connections.set(socket, opened);
      socket.once("close", () => opened.auth.close());
      state = opened;
    }
    return state;
  }

  /** Decides a request on a connection; on an allow, picks its exit. */
  async function admit(
    socket: net.Socket,
    {
      username,
      password,
      destIp,
      repin = false,
    }: { username?: string | undefined; password?: string | undefined; destIp?: string | undefined; repin?: boolean },
  ): Promise<Admission> {
    if (!username) return { decision: { allow: false, status: 407, error_code: "auth-failed" } };
    const state = connectionOf(socket);
    const credentials = { username, password, product: productOf(username, destIp), destIp, repin };
    const decision = await state.auth.decide(credentials);
    if (!decision.allow) return { decision };
    const exit = chooseExit(decision, { connectionSeed: state.seed, repin });
    state.auth.useExit(exit, decision);
    const clientIp = state.sourceIp;
    return { decision, exit, requestId: newRequestId(), username, destIp: destIp ?? null, clientIp };
  }

  function report(
    admission: Admitted,
    {
      method,
      targetHost,
      status,
      bytesIn,
      bytesOut,
      tag,
      errorCode = null,
    }: {
      method: string;
      targetHost: string;
      status: number;
      bytesIn: number;
      bytesOut: number;
      tag: string | null;
      errorCode?: string | null;
    },
  ): void {
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
      ...decidedBy(decision),
    });
  }

  /**
   * The sub-user's target rules against a request's host: a refusal is answered by the caller and reported (no
   * bytes), so it shows in traffic errors and the request log.
   */
  function targetDenied(
    socket: net.Socket,
    admission: Admitted,
    { method, host, tag }: { method: string; host: string; tag: string | null },
  ): Refused | null {
    const denied = connectionOf(socket).auth.reach(host, admission.decision);
    if (denied) {
      report(admission, {
        method,
        targetHost: host,
        status: denied.status,
        bytesIn: 0,
        bytesOut: 0,
        tag,
        errorCode: denied.error_code,
      });
    }
    return denied;
  }

  // ── The echo endpoint: answered by the gateway, no credit used ─────────────────────────────────────────

  function answerEcho(res: http.ServerResponse, admission: Admitted, path: string | undefined): void {
    const body = path === "/healthz" ? { status: "ok" } : echoBody(admission.exit, admission.requestId);
    res.writeHead(200, { "Content-Type": "application/json", ...exitHeaders(admission.exit, admission.requestId) });
    res.end(JSON.stringify(body));
  }
  const echoServer = http.createServer((req, res) => answerEcho(res, echoContexts.get(req.socket)!, req.url));

  // ── Tunnels (CONNECT and SOCKS5) ───────────────────────────────────────────────────────────────────

  /** `open(errorCode | null)` answers the client; then bytes flow both ways until either side closes. */
  function tunnel(
    client: net.Socket,
    admission: Admitted,
    {
      host,
      port,
      head,
      tag,
      open,
    }: {
      host: string;
      port: number;
      head: Buffer;
      tag: string | null;
      open: (errorCode: string | null, status?: number) => void;
    },
  ): void {
    const denied = targetDenied(client, admission, { method: "CONNECT", host, tag });
    if (denied) {
      open(denied.error_code, denied.status);
      return;
    }
    if (host === echoHost) {
      echoContexts.set(client, admission);
      open(null);
      if (head.length) client.unshift(head);
      echoServer.emit("connection", client);
      client.resume();
      return;
    }
    if (!allowTarget(host)) {
      open("target-not-allowed");
      return;
    }
    const upstream = net.connect(port, host);
    let opened = false;
    let failure: string | null = null;
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

  async function onConnect(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.pause();
    const [host, port] = splitHostPort(req.url);
    const admission = await admit(client, {
      ...basicCredentials(req.headers["proxy-authorization"]),
      destIp: headerOf(req, ISP_IP_HEADER),
      repin: req.headers[REPIN_HEADER] === "true",
    });
    if (!("exit" in admission)) {
      const { decision } = admission;
      const reason = STATUS_TEXT[decision.status] ?? "Refused";
      client.end(rawResponse(decision.status, reason, { ...refusalHeaders(decision), "Content-Length": "0" }));
      return;
    }
    tunnel(client, admission, {
      host,
      port,
      head,
      tag: tagOf(req.headers[TAG_HEADER]),
      open: (errorCode, status = 502) => {
        if (errorCode) {
          const reason = STATUS_TEXT[status] ?? "Bad Gateway";
          client.end(rawResponse(status, reason, { "X-Service-Error-Code": errorCode, "Content-Length": "0" }));
          return;
        }
        const headers = exitHeaders(admission.exit, admission.requestId);
        client.write(rawResponse(200, "Connection Established", headers));
      },
    });
  }

  function onSocks(socket: net.Socket, first: Buffer): void {
    let admitted: Admitted | null = null;
    handleSocks5(socket, first, {
      admit: async (credentials) => {
        const admission = await admit(socket, credentials);
        if (!("exit" in admission)) return { ok: false, errorCode: admission.decision.error_code };
        admitted = admission;
        return { ok: true };
      },
      // The handshake tunnels only once admitted.
      tunnel: ({ host, port, reply, rest }) =>
        tunnel(socket, admitted!, {
          host,
          port,
          head: rest,
          tag: null,
          open: (errorCode) => reply((errorCode === null ? undefined : SOCKS_REPLIES[errorCode]) ?? REPLY.succeeded),
        }),
    });
  }

  // ── Plain HTTP proxy requests ──────────────────────────────────────────────────────────────────────

  async function onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? "";
    if (url.startsWith("/")) return answerDirect(req, res);
    if (!URL.canParse(url)) {
      res.writeHead(400, { "Content-Type": "text/plain" });
      res.end("Not an absolute URL.\n");
      return;
    }
    const target = new URL(url);
    const admission = await admit(req.socket, {
      ...basicCredentials(req.headers["proxy-authorization"]),
      destIp: headerOf(req, ISP_IP_HEADER),
      repin: req.headers[REPIN_HEADER] === "true",
    });
    if (!("exit" in admission)) {
      const { decision } = admission;
      res.writeHead(decision.status, refusalHeaders(decision));
      res.end(`${decision.error_code}\n`);
      return;
    }
    const host = target.hostname.replace(/^\[|\]$/g, "");
    const denied = targetDenied(req.socket, admission, {
      method: req.method ?? "GET",
      host,
      tag: tagOf(req.headers[TAG_HEADER]),
    });
    if (denied) {
      res.writeHead(denied.status, refusalHeaders(denied));
      res.end(`${denied.error_code}\n`);
      return;
    }
    if (target.hostname === echoHost) return answerEcho(res, admission, target.pathname);
    if (!allowTarget(host)) {
      res.writeHead(502, { "X-Service-Error-Code": "target-not-allowed", "Content-Type": "text/plain" });
      res.end("The local gateway forwards to loopback targets only.\n");
      return;
    }
    forward(req, res, admission, { host, port: Number(target.port) || 80, path: `${target.pathname}${target.search}` });
  }

  function forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    admission: Admitted,
    { host, port, path }: { host: string; port: number; path: string },
  ): void {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !GATEWAY_HEADERS.includes(name)));
    const upstream = http.request({ host, port, path, method: req.method, headers, agent: false });
    let socket: net.Socket | null = null;
    upstream.once("socket", (opened) => {
      socket = opened;
    });
    const tag = tagOf(req.headers[TAG_HEADER]);
    const fields = { method: req.method ?? "GET", targetHost: host, tag };
    upstream.on("response", (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk) => chunks.push(chunk));
      answer.on("end", () => {
        const bytes = { in: socket?.bytesRead ?? 0, out: socket?.bytesWritten ?? 0 };
        const answerHeaders = { ...answer.headers };
        delete answerHeaders.connection;
        delete answerHeaders["keep-alive"];
        delete answerHeaders["transfer-encoding"];
        res.writeHead(answer.statusCode ?? 502, {
          ...answerHeaders,
          ...exitHeaders(admission.exit, admission.requestId, bytes),
        });
        res.end(Buffer.concat(chunks));
        report(admission, { ...fields, status: answer.statusCode ?? 502, bytesIn: bytes.in, bytesOut: bytes.out });
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

  function answerDirect(req: http.IncomingMessage, res: http.ServerResponse): void {
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
  // The sockets are the ones handed in below (`net.Socket`s).
  httpServer.on("connect", (req, client: net.Socket, head: Buffer) =>
    onConnect(req, client, head).catch(() => client.destroy()),
  );

  return net.createServer((socket) => {
    socket.once("error", () => socket.destroy());
    // No encoding is set: chunks are Buffers.
    socket.once("data", (first: Buffer) => {
      socket.pause();
      if (first[0] === 0x05) return onSocks(socket, first);
      socket.unshift(first);
      httpServer.emit("connection", socket);
      socket.resume();
    });
  });
}

/**
 * What a usage record says of its decision. The node's: a sticky request names its key's generation (the store names
 * the session from the username and it), and a signed owner names the sub-user and account (all three or none).
 * `authorize`'s: a sticky request names the session it gave.
 */
function decidedBy(
  decision: Allowed,
): Pick<UsageRecord, "session" | "session_gen" | "subuser" | "account" | "owner_tag"> {
  if ("cache_ttl_s" in decision) return { session: decision.session?.id ?? null };
  const { session, subuser, account, owner_tag } = decision;
  return {
    ...(session ? { session_gen: session.generation } : {}),
    ...(owner_tag && account ? { subuser, account, owner_tag } : {}),
  };
}

function splitHostPort(authority: string | undefined): [string, number] {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(authority ?? "");
  return match ? [match[1] ?? "", Number(match[2])] : [authority ?? "", 443];
}

/** A request header's value (Node joins a repeated one into one string). */
function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}
