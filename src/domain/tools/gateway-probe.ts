import type { DomainContext, Principal } from "../context";
import { simulatedProbe } from "../sandbox/simulated-probe";
import type { GatewayProbe } from "./probe";
import { socketProbe } from "./socket-probe";

/**
 * The probe a caller's tests run with: the real gateway over `connect()`; sandbox keys get a simulated probe with
 * deterministic answers (sandbox sub-users are unknown to the real gateway).
 */
export function probeFor(ctx: DomainContext, principal: Principal): GatewayProbe {
  if (!principal.livemode) return simulatedProbe(ctx);
  return socketProbe({ hostname: ctx.env.GATEWAY_HOST, port: Number(ctx.env.GATEWAY_PORT) });
}
