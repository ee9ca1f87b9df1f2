import type { SessionSpec } from "../../../durable-objects/session-book";
import { sha256Hex } from "../../platform/crypto";
import type { DomainContext } from "../context";
import { subuserGate } from "../subusers/gate-sync";
import { authorizeIspRequest } from "./authorize-isp";
import { type AuthorizeRequest, GATEWAY_LIMIT_SERVICE_CODE, type GatewayDecision, refuse } from "./decision";
import { parseUsername } from "./username";

/**
 * The gateway's access decision for one proxy request: the username grammar here, then one call to the
 * sub-user's gate (credentials or whitelist, status, product, rps and concurrency).
 */
export async function authorizeProxyRequest(ctx: DomainContext, request: AuthorizeRequest): Promise<GatewayDecision> {
  if (request.product === "isp") {
    if (!request.destIp) return refuse(400, "bad-username");
    return authorizeIspRequest(ctx, { ...request, destIp: request.destIp });
  }
  const parsed = parseUsername(request.username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok) return refuse(400, parsed.error);
  const { name, product, target } = parsed.value;
  // The username's type names the product; a request on another product's listener is malformed.
  if (product !== request.product) return refuse(400, "bad-username");

  const session: SessionSpec | undefined =
    target.sessionId !== null && target.sesstime !== null
      ? {
          key: request.username.toLowerCase(),
          product,
          sessionId: target.sessionId,
          region: target.region,
          state: target.state,
          city: target.city,
          asn: target.asn,
          minutes: target.sesstime,
        }
      : undefined;
  const decision = await subuserGate(ctx, name).decide({
    product,
    passwordHash: request.password ? await sha256Hex(request.password) : null,
    sourceIp: request.sourceIp,
    session,
  });
  switch (decision.outcome) {
    case "allow":
      return {
        allow: true,
        subuserId: decision.subuserId,
        product,
        lease: decision.lease,
        cacheTtlS: decision.cacheTtlS,
        target,
        session: decision.session,
      };
    case "deny":
      return decision.status === 429
        ? {
            ...refuse(429, decision.errorCode),
            serviceCode: GATEWAY_LIMIT_SERVICE_CODE,
            retryAfterS: decision.retryAfterS ?? 1,
          }
        : refuse(decision.status, decision.errorCode);
    default:
      return refuse(407, "auth-failed");
  }
}

/** Frees the concurrency slot of a lease. The lease names its gate, so no lookup is needed. */
export async function releaseLease(ctx: DomainContext, lease: string): Promise<boolean> {
  const name = lease.split(".")[0];
  if (!name || !/^[a-z0-9]{1,32}$/.test(name)) return false;
  return subuserGate(ctx, name).release(lease);
}
