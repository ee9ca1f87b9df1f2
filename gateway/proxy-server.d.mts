import type { Server } from "node:net";

export const ECHO_HOST: string;
export function isLoopback(host: string): boolean;

export interface ProxyCredentials {
  username: string;
  password?: string;
  product: "residential" | "mobile" | "isp";
  /** ISP: the addressed batch IP. */
  destIp?: string;
}

/**
 * An allow (`{allow: true, product, target, session, …}`) or a refusal (`{allow: false, status, error_code,
 * retry_after_s?, service_code?}`), as docs/gateway.md names them.
 */
export type GatewayDecision = { allow: boolean } & Record<string, unknown>;

/** One client connection's decisions. */
export interface GatewayConnection {
  decide(credentials: ProxyCredentials): Promise<GatewayDecision>;
  useExit(exit: Record<string, unknown>, decision: GatewayDecision): void;
  /** `onRevoked` closes the connection's tunnel once its sub-user no longer admits it. */
  watch(onRevoked: () => void): void;
  close(): void;
}

/** What decides the gateway's requests: gateway/node-decider.mjs, or a stub of it. */
export interface GatewayDecider {
  connection(sourceIp: string): GatewayConnection;
}

export function createProxyServer(options: {
  decider: GatewayDecider;
  usage: { add(record: Record<string, unknown>): void };
  echoHost?: string;
  allowTarget?: (host: string) => boolean;
}): Server;
