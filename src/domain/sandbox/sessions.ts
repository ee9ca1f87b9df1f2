import type { SessionPin } from "../../durable-objects/subuser-gate/contract";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import type { BandwidthProduct } from "../../vocabulary";
import type { DomainContext, Principal } from "../context";
import { findSubuser } from "../subusers/subusers";
import { decideAsGateway } from "./gate";
import { reportSyntheticUsage, simulatedExitIp, syntheticRecords } from "./traffic";
import { assertSandbox } from "./twins";

export interface SessionRequest {
  subuserId: string;
  product: BandwidthProduct;
  region: string;
  state?: string;
  city?: string;
  asn?: number;
  sessionId: string;
  sesstime: number;
  /** Requests carried on the session (through the real ingestion path); the first pins its exit. */
  requests: number;
  bytesPerRequest: number;
}

/**
 * Starts (or reuses) a sticky session as if the gateway had authorized the username with the sub-user's
 * password (`decideAsGateway`), then reports `requests` requests on it through the usage ingestion, the first
 * pinning its exit.
 */
export async function startSession(ctx: DomainContext, principal: Principal, input: SessionRequest) {
  assertSandbox(principal);
  const subuser = await findSubuser(ctx, principal, input.subuserId);
  const username = sessionUsername(ctx, subuser.name, input);
  const answer = await decideAsGateway(ctx, username, subuser.passwordHash);
  if (!answer.ok) {
    const message = `The username ${username} breaks the gateway's grammar: ${answer.error}.`;
    throw new ApiError("invalid_request", message, { details: [{ field: "session_id", message }] });
  }
  const { decision, parsed } = answer;
  if (decision.outcome !== "allow" || !decision.session) {
    const refusal = decision.outcome === "deny" ? `${decision.status} ${decision.errorCode}` : "407 auth-failed";
    throw new ApiError("gateway_refused", `The gateway would refuse ${username}: ${refusal}.`);
  }
  const exitIp = decision.session.exitIp ?? simulatedExitIp(parsed.target.region, 0);
  await carry(ctx, input, username, exitIp);
  return { subuser, username, session: { ...decision.session, exitIp } satisfies SessionPin };
}

function sessionUsername(ctx: DomainContext, name: string, input: SessionRequest): string {
  const segments = [
    ["type", input.product === "mobile" ? "mob" : "res"],
    ["region", input.region],
    ["state", input.state],
    ["city", input.city],
    ["asn", input.asn],
    ["session", input.sessionId],
    ["sesstime", input.sesstime],
  ].filter(([, value]) => value !== undefined);
  return `${ctx.env.GATEWAY_USER_PREFIX}_${name}-${segments.map(([key, value]) => `${key}-${value}`).join("-")}`;
}

/** The session's requests, reported like the gateway reports them (their exit is the session's). */
async function carry(ctx: DomainContext, input: SessionRequest, username: string, exitIp: string): Promise<void> {
  if (input.requests === 0) return;
  const at = now();
  const records = syntheticRecords({
    usernames: [username],
    product: input.product,
    requests: input.requests,
    from: at,
    to: at,
    regions: [input.region],
    tags: [],
    errorRate: 0,
    bytesPerRequest: input.bytesPerRequest,
    destIps: [],
    exitIps: [exitIp],
  });
  await reportSyntheticUsage(ctx, records);
}
