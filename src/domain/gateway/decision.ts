import type { Product } from "../../db/schema";
import type { SessionPin } from "../../durable-objects/subuser-gate/contract";
import {
  type GatewayErrorCode,
  type Refusal as RuleRefusal,
  refusal,
  type TargetRules,
} from "../../platform/gateway-rules";
import type { GatewayTarget } from "./username";

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

/** A refusal as the gateway contract answers it (status, code, and on 429 the service code and retry). */
export type Refusal = { allow: false } & RuleRefusal;

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
      /** Where the sub-user's requests may go (null: anywhere): the gateway checks each request's target. */
      targetRules: TargetRules | null;
    }
  | Refusal;

export function refuse(errorCode: GatewayErrorCode): Refusal {
  return { allow: false, ...refusal(errorCode) };
}

/** The gate's or the rules' refusal, as the contract answers it. */
export function refused(rule: RuleRefusal): Refusal {
  return { allow: false, ...rule };
}
