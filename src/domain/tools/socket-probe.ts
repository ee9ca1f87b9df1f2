import { connect } from "cloudflare:sockets";
import { bytesToBase64 } from "../../platform/base64";
import { LIMIT_SERVICE_CODE, socksRefusal } from "../../platform/gateway-rules";
import type { GatewayProbe, ProbeExit, ProbeOutcome, ProbeRequest } from "./probe";
import { ProbeFailure, type ResponseHead, SocketReader } from "./socket-reader";

const encoder = new TextEncoder();

/** The gateway's exit headers (docs/gateway.md), read from the CONNECT answer or the target's response. */
function exitFromHeaders(headers: Headers): ProbeExit | null {
  const ip = headers.get("x-gateway-exit-ip");
  if (!ip) return null;
  const [country = "", state = "", city = ""] = (headers.get("x-gateway-exit-geo") ?? "").split("/");
  const asn = Number(headers.get("x-gateway-exit-asn"));
  return { ip, country, state: state || null, city: city || null, asn: Number.isInteger(asn) ? asn : null };
}

/** The gateway's echo endpoint answers with the exit as JSON: the only source of it over SOCKS5. */
function exitFromEchoBody(body: Uint8Array): ProbeExit | null {
  try {
    const echo = JSON.parse(new TextDecoder().decode(body)) as {
      exit_ip?: unknown;
      exit_geo?: { country?: string; state?: string | null; city?: string | null };
      exit_asn?: unknown;
    };
    if (typeof echo.exit_ip !== "string" || !echo.exit_geo?.country) return null;
    return {
      ip: echo.exit_ip,
      country: echo.exit_geo.country,
      state: echo.exit_geo.state ?? null,
      city: echo.exit_geo.city ?? null,
      asn: typeof echo.exit_asn === "number" ? echo.exit_asn : null,
    };
  } catch {
    return null;
  }
}

function basic(username: string, password: string): string {
  return bytesToBase64(encoder.encode(`${username}:${password}`));
}

function targetAuthority(target: URL): { host: string; port: number } {
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  return { host: target.hostname.replace(/^\[|\]$/g, ""), port };
}

type Tunnel = { refused: Partial<ProbeOutcome> } | { open: true; exit: ProbeExit | null };

/** HTTP CONNECT with Basic proxy credentials; a non-200 answer is the gateway's refusal. */
async function httpConnect(
  reader: SocketReader,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  request: ProbeRequest,
): Promise<Tunnel> {
  const { host, port } = targetAuthority(request.target);
  const authority = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  await writer.write(
    encoder.encode(
      `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n` +
        `Proxy-Authorization: Basic ${basic(request.username, request.password)}\r\n\r\n`,
    ),
  );
  const head = await reader.head();
  if (head.status !== 200) return { refused: refusalFromHead(head) };
  return { open: true, exit: exitFromHeaders(head.headers) };
}

function refusalFromHead({ status, headers }: ResponseHead): Partial<ProbeOutcome> {
  const retryAfter = Number(headers.get("retry-after"));
  const serviceCode = Number(headers.get("x-service-code"));
  return {
    status,
    errorCode: headers.get("x-service-error-code"),
    retryAfterS: Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : null,
    serviceCode: Number.isInteger(serviceCode) && serviceCode > 0 ? serviceCode : null,
  };
}

/**
 * SOCKS5 (RFC 1928) with username/password (RFC 1929). A failed authentication's status byte names the gateway's
 * refusal (`socksStatusByte`), since SOCKS has no headers to carry it.
 */
async function socks5Connect(
  reader: SocketReader,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  request: ProbeRequest,
): Promise<Tunnel> {
  await writer.write(new Uint8Array([0x05, 0x01, 0x02]));
  const [version, method] = await reader.exactly(2);
  if (version !== 0x05 || method !== 0x02) throw new ProbeFailure("protocol-error");

  const user = encoder.encode(request.username);
  const password = encoder.encode(request.password);
  await writer.write(new Uint8Array([0x01, user.length, ...user, password.length, ...password]));
  const [, status = 0xff] = await reader.exactly(2);
  if (status !== 0x00) {
    const refusal = socksRefusal(status);
    return {
      refused: {
        status: refusal.status,
        errorCode: refusal.errorCode,
        serviceCode: refusal.status === 429 ? LIMIT_SERVICE_CODE : null,
      },
    };
  }

  const { host, port } = targetAuthority(request.target);
  const name = encoder.encode(host);
  await writer.write(new Uint8Array([0x05, 0x01, 0x00, 0x03, name.length, ...name, port >> 8, port & 0xff]));
  const [, reply, , addressType] = await reader.exactly(4);
  await reader.exactly(addressType === 0x01 ? 4 : addressType === 0x04 ? 16 : (await reader.exactly(1))[0]!);
  await reader.exactly(2);
  if (reply !== 0x00) {
    // RFC 1928 replies: 0x02 "not allowed by ruleset", anything else a failure to reach the target.
    return { refused: { status: 502, errorCode: reply === 0x02 ? "target-not-allowed" : "upstream-unreachable" } };
  }
  return { open: true, exit: null };
}

/** The real probe: `connect()` to the gateway, a tunnel by CONNECT or SOCKS5, then one GET to the target. */
export function socketProbe(gateway: { hostname: string; port: number }): GatewayProbe {
  return {
    async run(request) {
      const started = performance.now();
      const outcome: ProbeOutcome = {
        status: null,
        errorCode: null,
        serviceCode: null,
        retryAfterS: null,
        exit: null,
        targetStatus: null,
        latencyMs: { connect: null, tls: null, ttfb: null, total: 0 },
      };
      const https = request.target.protocol === "https:";
      const socket = connect(gateway, { secureTransport: https ? "starttls" : "off", allowHalfOpen: false });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ProbeFailure("timeout")), request.timeoutMs);
      });
      try {
        await Promise.race([exchange(socket, request, outcome), deadline]);
      } catch (error) {
        if (!(error instanceof ProbeFailure)) throw error;
        outcome.errorCode = error.code;
      } finally {
        clearTimeout(timer);
        outcome.latencyMs.total = since(started);
        socket.close().catch(() => {});
      }
      return outcome;
    },
  };
}

/** Milliseconds since `start` (performance.now() advances across I/O, which is what each phase is). */
function since(start: number): number {
  return Math.round(performance.now() - start);
}

/** Each phase is timed on its own: TCP connect, TLS handshake, and request sent → first byte of the answer. */
async function exchange(socket: Socket, request: ProbeRequest, outcome: ProbeOutcome): Promise<void> {
  const connecting = performance.now();
  try {
    await socket.opened;
  } catch {
    throw new ProbeFailure("gateway-unreachable");
  }
  outcome.latencyMs.connect = since(connecting);

  let reader = new SocketReader(socket.readable);
  let writer = socket.writable.getWriter();
  const tunnel = await (request.protocol === "socks5" ? socks5Connect : httpConnect)(reader, writer, request);
  if ("refused" in tunnel) {
    Object.assign(outcome, tunnel.refused);
    return;
  }
  outcome.status = 200;
  outcome.exit = tunnel.exit;

  const { host } = targetAuthority(request.target);
  if (request.target.protocol === "https:") {
    reader.release();
    writer.releaseLock();
    const handshake = performance.now();
    const secure = socket.startTls({ expectedServerHostname: host });
    reader = new SocketReader(secure.readable);
    writer = secure.writable.getWriter();
    await secure.opened;
    outcome.latencyMs.tls = since(handshake);
  }

  const sent = performance.now();
  await writer.write(
    encoder.encode(
      `GET ${request.target.pathname}${request.target.search} HTTP/1.1\r\nHost: ${request.target.host}\r\n` +
        "User-Agent: proxy-test/1\r\nAccept: */*\r\nConnection: close\r\n\r\n",
    ),
  );
  await reader.waitForData();
  outcome.latencyMs.ttfb = since(sent);
  const head = await reader.head();
  outcome.targetStatus = head.status;
  const length = Number(head.headers.get("content-length"));
  const body = await reader.body(Number.isInteger(length) && length >= 0 ? length : null);
  outcome.exit ??= exitFromHeaders(head.headers) ?? exitFromEchoBody(body);
}
