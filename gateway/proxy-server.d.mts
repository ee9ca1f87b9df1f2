import type { Server } from "node:net";

export const ECHO_HOST: string;
export function isLoopback(host: string): boolean;

/** The internal contract's gateway side, or a stub of it. */
export interface GatewayApi {
  authorize(request: {
    username: string;
    password: string | null;
    source_ip: string;
    product: "residential" | "mobile" | "isp";
    dest_ip?: string;
  }): Promise<Record<string, unknown>>;
  release(lease: string): Promise<unknown>;
}

export function createProxyServer(options: {
  api: GatewayApi;
  usage: { add(record: Record<string, unknown>): void };
  echoHost?: string;
  allowTarget?: (host: string) => boolean;
}): Server;
