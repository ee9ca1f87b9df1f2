import type { ExitPin, SessionSpec } from "../../durable-objects/subuser-gate/contract";
import { sha256Hex } from "../../platform/crypto";
import { isSandboxName } from "../../platform/gateway-rules";
import type { DomainContext } from "../context";
import { subuserGate } from "../subusers/gate-sync";
import { authorizeIspRequest } from "./authorize-isp";
import { type AuthorizeRequest, type GatewayDecision, refuse, refused } from "./decision";
import { type ParsedUsername, parseUsername } from "./username";

/**
 * The gateway's access decision for one proxy request: the username grammar here, then one call to the
 * sub-user's gate (credentials or whitelist, status, product, rps and concurrency).
 */
export async function authorizeProxyRequest(ctx: DomainContext, request: AuthorizeRequest): Promise<GatewayDecision> {
  if (request.product === "isp") {
    if (!request.destIp) return refuse("bad-username");
    return authorizeIspRequest(ctx, { ...request, destIp: request.destIp });
  }
  const parsed = parseUsername(request.username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok) return refuse(parsed.error);
  const { name, product, target } = parsed.value;
  // Sandbox sub-users exist only for the API's test helpers: to the proxy network they are unknown names.
  if (isSandboxName(name)) return refuse("auth-failed");
  // The username's type names the product; a request on another product's listener is malformed.
  if (product !== request.product) return refuse("bad-username");

  const decision = await subuserGate(ctx, name).decide({
    product,
    passwordHash: request.password ? await sha256Hex(request.password) : null,
    sourceIp: request.sourceIp,
    session: sessionSpecOf(request.username, parsed.value),
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
        targetRules: decision.targetRules,
      };
    case "deny": {
      const { outcome: _, ...refusal } = decision;
      return refused(refusal);
    }
    default:
      return refuse("auth-failed");
  }
}

/** The sticky session a username's session segments ask for (the whole username is its key), if any. */
export function sessionSpecOf(username: string, parsed: ParsedUsername): SessionSpec | undefined {
  const { target, product } = parsed;
  if (target.sessionId === null || target.sesstime === null) return undefined;
  return {
    key: username.toLowerCase(),
    product,
    sessionId: target.sessionId,
    region: target.region,
    state: target.state,
    city: target.city,
    asn: target.asn,
    minutes: target.sesstime,
  };
}

/** Frees the concurrency slot of a lease. The lease names its gate, so no lookup is needed. */
export async function releaseLease(ctx: DomainContext, lease: string, pin?: ExitPin): Promise<boolean> {
  const name = lease.split(".")[0];
  if (!name || !/^[a-z0-9]{1,32}$/.test(name)) return false;
  return subuserGate(ctx, name).release(lease, pin);
}
