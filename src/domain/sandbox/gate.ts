import type { Decision } from "../../durable-objects/subuser-gate/contract";
import { generationOf, sessionKey, stickyExit } from "../../platform/sticky-sessions";
import type { DomainContext } from "../context";
import { type ParsedUsername, parseUsername, type UsernameError } from "../gateway/username";
import { subuserGate } from "../subusers/gate-sync";
import { SANDBOX_EXITS } from "./traffic";

/** The address a simulated client connects from (TEST-NET-1, RFC 5737). */
const SIMULATED_CLIENT_IP = "192.0.2.1";

/**
 * A sticky username's session as a gateway node decides it (docs/gateway.md, "Sticky sessions"): its key, the key's
 * generation in the sub-user's snapshot (only termination moves it), and the exit both give among the sandbox's.
 */
export interface StickyChoice {
  key: string;
  generation: number;
  exitIp: string;
}

export type SandboxDecision =
  | { ok: true; parsed: ParsedUsername; decision: Decision; sticky: StickyChoice | null }
  | { ok: false; error: UsernameError };

/**
 * What the gateway would decide for a sandbox username: the grammar, then the sub-user's own gate (credentials,
 * status, product, pool, cap, rps, concurrency) exactly as `authorize` asks it — the gateway contract itself refuses
 * sandbox names — and, for an allowed sticky username, its session by the node's rules: the key's generation from
 * the gate's snapshot and the exit `stickyExit` gives over the sandbox's exits. Nothing stays connected: an allow's
 * lease is released at once.
 */
export async function decideAsGateway(
  ctx: DomainContext,
  username: string,
  passwordHash: string,
): Promise<SandboxDecision> {
  const parsed = parseUsername(username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const gate = subuserGate(ctx, parsed.value.name);
  const decision = await gate.decide({ product: parsed.value.product, passwordHash, sourceIp: SIMULATED_CLIENT_IP });
  if (decision.outcome !== "allow") return { ok: true, parsed: parsed.value, decision, sticky: null };
  await gate.release(decision.lease);
  const { target } = parsed.value;
  if (target.sessionId === null || target.sesstime === null) {
    return { ok: true, parsed: parsed.value, decision, sticky: null };
  }
  const key = sessionKey(username);
  const generation = generationOf((await gate.snapshot())?.generations, key);
  const exitIp = stickyExit(SANDBOX_EXITS, key, generation) as string;
  return { ok: true, parsed: parsed.value, decision, sticky: { key, generation, exitIp } };
}
