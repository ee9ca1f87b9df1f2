import type { Decision } from "../../durable-objects/subuser-gate/contract";
import type { DomainContext } from "../context";
import { sessionSpecOf } from "../gateway/authorize";
import { type ParsedUsername, parseUsername, type UsernameError } from "../gateway/username";
import { subuserGate } from "../subusers/gate-sync";

/** The address a simulated client connects from (TEST-NET-1, RFC 5737). */
const SIMULATED_CLIENT_IP = "192.0.2.1";

export type SandboxDecision =
  | { ok: true; parsed: ParsedUsername; decision: Decision }
  | { ok: false; error: UsernameError };

/**
 * What the gateway would decide for a sandbox username: the grammar, then the sub-user's own gate (credentials,
 * status, product, pool, cap, rps, concurrency, sticky-session pin) exactly as `authorize` asks it — the gateway
 * contract itself refuses sandbox names. Nothing stays connected: an allow's lease is released at once.
 */
export async function decideAsGateway(
  ctx: DomainContext,
  username: string,
  passwordHash: string,
): Promise<SandboxDecision> {
  const parsed = parseUsername(username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const gate = subuserGate(ctx, parsed.value.name);
  const decision = await gate.decide({
    product: parsed.value.product,
    passwordHash,
    sourceIp: SIMULATED_CLIENT_IP,
    session: sessionSpecOf(username, parsed.value),
  });
  if (decision.outcome === "allow") await gate.release(decision.lease);
  return { ok: true, parsed: parsed.value, decision };
}
