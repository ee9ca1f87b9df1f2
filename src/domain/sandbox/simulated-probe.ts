import { sha256Hex } from "../../platform/crypto";
import { LIMIT_SERVICE_CODE, targetRefusal } from "../../platform/gateway-rules";
import type { DomainContext } from "../context";
import type { GatewayProbe, ProbeOutcome, ProbeRequest } from "../tools/probe";
import { decideAsGateway } from "./gate";
import { simulatedExitIp } from "./traffic";

/** Fixed phase timings of the simulated gateway (ms): the same answer every time. */
const LATENCY = { connect: 12, tls: 18, ttfb: 35 } as const;
/** The ASN reported for simulated exits without an `asn` segment (documentation range, RFC 5398). */
const SIMULATED_ASN = 64_496;

/**
 * The sandbox's gateway: no socket is opened. The username is decided by the sub-user's gate as the real gateway
 * would have it decided (407 wrong password, 403 disabled or a target its rules deny, 402 exhausted or capped, 429 limits); an allow answers with a
 * deterministic exit: a sticky session's (by the node's rule: its key and generation, so it changes only when the
 * session is terminated) or a TEST-NET-3 address, the geo and ASN from the username, fixed latencies.
 */
export function simulatedProbe(ctx: DomainContext): GatewayProbe {
  return {
    async run(request: ProbeRequest): Promise<ProbeOutcome> {
      const answer = await decideAsGateway(ctx, request.username, await sha256Hex(request.password));
      if (!answer.ok) return refused(400, answer.error);
      const { decision, parsed, sticky } = answer;
      if (decision.outcome === "deny") {
        return decision.status === 429
          ? {
              ...refused(429, decision.errorCode),
              serviceCode: LIMIT_SERVICE_CODE,
              retryAfterS: decision.retryAfterS ?? 1,
            }
          : refused(decision.status, decision.errorCode);
      }
      if (decision.outcome !== "allow") return refused(407, "auth-failed");
      const denied = targetRefusal(decision.targetRules, request.target.hostname);
      if (denied) return refused(denied.status, denied.errorCode);
      const { target } = parsed;
      const tls = request.target.protocol === "https:" ? LATENCY.tls : null;
      return {
        status: 200,
        errorCode: null,
        serviceCode: null,
        retryAfterS: null,
        exit: {
          ip: sticky?.exitIp ?? simulatedExitIp(target.region, 0),
          country: target.region,
          state: target.state,
          city: target.city,
          asn: target.asn ?? SIMULATED_ASN,
        },
        targetStatus: 200,
        latencyMs: {
          connect: LATENCY.connect,
          tls,
          ttfb: LATENCY.ttfb,
          total: LATENCY.connect + (tls ?? 0) + LATENCY.ttfb,
        },
      };
    },
  };
}

/** A refusal as the gateway sends it, at the connect phase. */
function refused(status: number, errorCode: string): ProbeOutcome {
  return {
    status,
    errorCode,
    serviceCode: null,
    retryAfterS: null,
    exit: null,
    targetStatus: null,
    latencyMs: { connect: LATENCY.connect, tls: null, ttfb: null, total: LATENCY.connect },
  };
}
