import type { Product } from "../../db/schema";
import type { SessionPin } from "../../durable-objects/subuser-gate/contract";
import type { GatewayTarget } from "./username";

/** Service code of gateway 429s (spec §7). */
export const GATEWAY_LIMIT_SERVICE_CODE = 30002 as const;

export interface IspTarget {
  type: "isp";
  ip: string;
  port: number;
  batchId: string;
  country: string;
  city: string | null;
  asn: number;
}

export interface AuthorizeRequest {
  username: string;
  password?: string | null;
  sourceIp: string;
  product: Product;
  /** ISP: the addressed static IP. */
  destIp?: string;
}

export type Refusal = {
  allow: false;
  status: 400 | 402 | 403 | 407 | 429;
  errorCode: string;
  /** On 429 only: the spec's service code and when to retry. */
  serviceCode?: typeof GATEWAY_LIMIT_SERVICE_CODE;
  retryAfterS?: number;
};

export type GatewayDecision =
  | {
      allow: true;
      subuserId: string;
      product: Product;
      /** null for ISP (per-IP limits only). */
      lease: string | null;
      cacheTtlS: number;
      target: GatewayTarget | IspTarget;
      /** The sticky session a username with session segments is pinned to (null without them, and for ISP). */
      session: SessionPin | null;
    }
  | Refusal;

export function refuse(status: Refusal["status"], errorCode: string): Refusal {
  return { allow: false, status, errorCode };
}
