/**
 * The gateway the proxy-test tests talk to (runs in Node, started by vitest.config.ts): the local gateway's own
 * protocol code (gateway/proxy-server.ts: HTTP CONNECT and SOCKS5 on one port) with a stubbed decider that decides
 * by the password, plus a loopback HTTP target. workerd reaches both over `connect()` on 127.0.0.1.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createProxyServer, type GatewayDecider } from "../../gateway/proxy-server.ts";
import type { ProxyTarget } from "../../gateway/wire.ts";

/** Passwords the stub understands; any other password is admitted. */
export const STUB_PASSWORDS = {
  wrong: { allow: false, status: 407, error_code: "auth-failed" },
  disabled: { allow: false, status: 403, error_code: "subuser-disabled" },
  exhausted: { allow: false, status: 402, error_code: "bandwidth-exhausted" },
  busy: { allow: false, status: 429, error_code: "rps-limit", service_code: 30002, retry_after_s: 2 },
} as const;
/** This password makes the stub never answer, so the test times out. */
export const HANG_PASSWORD = "hang";
/** Every admitted request leaves from this target (the gateway's exit geo comes from it). */
export const STUB_TARGET: ProxyTarget = {
  type: "res",
  region: "de",
  state: "be",
  city: "berlin",
  asn: 3320,
  session_id: null,
  sesstime: null,
};

const stubDecider: GatewayDecider = {
  connection: () => ({
    async decide({ password = "", product }) {
      if (password === HANG_PASSWORD) return new Promise<never>(() => {});
      const refusal = STUB_PASSWORDS[password as keyof typeof STUB_PASSWORDS];
      if (refusal) return refusal;
      const admitted = product === "mobile" ? "mobile" : "residential";
      return { allow: true, subuser: "sub_stub", product: admitted, lease: null, target: STUB_TARGET, session: null };
    },
    useExit() {},
    reach: () => null,
    watch() {},
    close() {},
  }),
};

function listening(server: http.Server | ReturnType<typeof createProxyServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    server.unref();
  });
}

/** Starts the gateway and a target on free ports; neither keeps the test process alive. */
export async function startFakeGateway(): Promise<{ port: number; targetUrl: string }> {
  const gateway = createProxyServer({ decider: stubDecider, usage: { add() {} } });
  const target = http.createServer((_request, response) => {
    response.writeHead(200, { "Content-Type": "text/plain" });
    response.end("hello through the proxy\n");
  });
  const [port, targetPort] = await Promise.all([listening(gateway), listening(target)]);
  return { port, targetUrl: `http://127.0.0.1:${targetPort}/hello` };
}
