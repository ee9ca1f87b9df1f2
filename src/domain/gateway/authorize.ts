import { subuserGate } from "../../../durable-objects";
import type { Decision } from "../../../durable-objects/subuser-gate";
import type { Product } from "../../db/schema";
import { sha256Hex } from "../../platform/crypto";
import type { DomainContext } from "../context";
import { syncGate } from "../subusers/gate-sync";
import { authorizeIspRequest, type IspDecision } from "./authorize-isp";
import { type GatewayTarget, parseUsername } from "./username";

/** Service code of gateway 429s (spec §7). */
export const GATEWAY_LIMIT_SERVICE_CODE = 30002 as const;

export interface AuthorizeRequest {
  username: string;
  password?: string | null;
  source_ip: string;
  product: Product;
  /** ISP: the addressed static IP. */
  dest_ip?: string;
}

export type GatewayDecision =
  | {
      allow: true;
      subuser: string;
      product: Product;
      lease: string;
      cache_ttl_s: number;
      target: GatewayTarget;
    }
  | { allow: false; status: 400 | 403 | 407 | 429; error_code: string; service_code?: 30002; retry_after_s?: number };

/**
 * The gateway's access decision for one proxy request: the username grammar here, then one call to the
 * sub-user's gate (credentials or whitelist, status, product, rps and concurrency).
 */
export async function authorizeProxyRequest(
  ctx: DomainContext,
  request: AuthorizeRequest,
): Promise<GatewayDecision | IspDecision> {
  if (request.product === "isp") {
    if (!request.dest_ip) return { allow: false, status: 400, error_code: "bad-username" };
    return authorizeIspRequest(ctx, { ...request, dest_ip: request.dest_ip });
  }
  const parsed = parseUsername(request.username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok) return { allow: false, status: 400, error_code: parsed.error };
  const { name, product, target } = parsed.value;
  // The username's type names the product; a request on another product's listener is malformed.
  if (product !== request.product) return { allow: false, status: 400, error_code: "bad-username" };

  const gate = subuserGate(ctx.env, name);
  const input = {
    product,
    passwordHash: request.password ? await sha256Hex(request.password) : null,
    sourceIp: request.source_ip,
  };
  let decision: Decision = await gate.decide(input);
  if (decision.outcome === "unconfigured") {
    // First decision for this name on this gate (or its storage was lost): load it from D1 once.
    const config = await syncGate(ctx, name);
    decision = config ? await gate.decide(input) : { outcome: "deny", status: 407, errorCode: "auth-failed" };
  }

  switch (decision.outcome) {
    case "allow":
      return {
        allow: true,
        subuser: decision.subuserId,
        product,
        lease: decision.lease,
        cache_ttl_s: decision.cacheTtlS,
        target,
      };
    case "deny":
      return {
        allow: false,
        status: decision.status,
        error_code: decision.errorCode,
        ...(decision.status === 429
          ? { service_code: GATEWAY_LIMIT_SERVICE_CODE, retry_after_s: decision.retryAfterS ?? 1 }
          : {}),
      };
    default:
      return { allow: false, status: 407, error_code: "auth-failed" };
  }
}

/** Frees the concurrency slot of a lease. The lease names its gate, so no lookup is needed. */
export async function releaseLease(ctx: DomainContext, lease: string): Promise<boolean> {
  const name = lease.split(".")[0];
  if (!name || !/^[a-z0-9]{1,32}$/.test(name)) return false;
  return subuserGate(ctx.env, name).release(lease);
}
