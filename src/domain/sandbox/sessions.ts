import type { SessionPin } from "../../durable-objects/subuser-gate/contract";
import type { AccountTrafficStores } from "../../durable-objects/traffic-store";
import type { SessionSnapshot } from "../../durable-objects/traffic-store/contract";
import { MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { sessionIdAt } from "../../platform/sticky-sessions";
import type { BandwidthProduct } from "../../vocabulary";
import type { DomainContext, Principal } from "../context";
import { buildUsername, type ParsedUsername, typeOf } from "../gateway/username";
import { findSubuser } from "../subusers/subusers";
import { accountStores } from "../traffic/store";
import { decideAsGateway, type StickyChoice } from "./gate";
import { reportSyntheticUsage, syntheticRecords } from "./traffic";
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
  /** Requests carried on the session (through the real ingestion path), on its exit. */
  requests: number;
  bytesPerRequest: number;
}

/** Sessions of one sub-user and `session_id` looked through for the username's live one. */
const SAME_SESSION_ID_SESSIONS = 100;

/**
 * Starts (or reuses) a sticky session as a gateway node would: the username is decided by the sub-user's gate as
 * with its password (`decideAsGateway`), the session's key and generation come from the gate's snapshot and its exit
 * from them (`stickyExit`). The live session of that (key, generation) in the account's store is reused; otherwise a
 * new one starts now, its id `sessionIdAt(key, generation, now)`: the id the store gives the session from its first
 * request's time, so the store names the usage alike. It is told to the store at once (so a second call finds it),
 * then `requests` requests are reported on it through the usage ingestion, carrying the generation.
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
  const { decision, parsed, sticky } = answer;
  if (decision.outcome !== "allow" || sticky === null) {
    const refusal = decision.outcome === "deny" ? `${decision.status} ${decision.errorCode}` : "407 auth-failed";
    throw new ApiError("gateway_refused", `The gateway would refuse ${username}: ${refusal}.`);
  }
  const stores = await accountStores(ctx, principal.accountId);
  const at = now();
  const live = await liveSession(stores, subuser.id, parsed, sticky, at);
  const session = live ?? newSession(subuser.id, parsed, sticky, at);
  if (!live) await stores.upsertSessions([session]);
  await carry(ctx, input, username, session, sticky, at);
  const pin = { id: session.id, exitIp: sticky.exitIp, startedAt: session.startedAt, expiresAt: session.expiresAt };
  return { subuser, username, session: pin satisfies SessionPin };
}

/**
 * The username's live session in the account's store: one of its (key, generation). A record that does not name its
 * key (a store of the release before generations) is known by its id, which its key, generation and start give.
 */
async function liveSession(
  stores: AccountTrafficStores,
  subuserId: string,
  parsed: ParsedUsername,
  sticky: StickyChoice,
  at: number,
): Promise<SessionSnapshot | null> {
  const sessions = await stores.listSessions({
    product: parsed.product,
    subuserIds: [subuserId],
    sessionId: parsed.target.sessionId ?? undefined,
    limit: SAME_SESSION_ID_SESSIONS,
  });
  const ofKey = (session: SessionSnapshot) =>
    session.key === undefined
      ? session.id === sessionIdAt(sticky.key, sticky.generation, session.startedAt)
      : session.key === sticky.key && session.generation === sticky.generation;
  return sessions.find((session) => session.status === "active" && session.expiresAt > at && ofKey(session)) ?? null;
}

/** A session of the key's generation starting at `at`, named as the store names it from its first request. */
function newSession(subuserId: string, parsed: ParsedUsername, sticky: StickyChoice, at: number): SessionSnapshot {
  const { target } = parsed;
  return {
    id: sessionIdAt(sticky.key, sticky.generation, at),
    key: sticky.key,
    generation: sticky.generation,
    subuserId,
    gateName: parsed.name,
    product: parsed.product,
    sessionId: target.sessionId as string,
    region: target.region,
    state: target.state,
    city: target.city,
    asn: target.asn,
    exitIp: sticky.exitIp,
    startedAt: at,
    expiresAt: at + (target.sesstime as number) * MINUTE,
    status: "active",
    terminatedAt: null,
    bytesUsed: 0,
    requests: 0,
    repinned: false,
    version: 0,
  };
}

function sessionUsername(ctx: DomainContext, name: string, input: SessionRequest): string {
  return buildUsername(ctx.env.GATEWAY_USER_PREFIX, name, {
    type: typeOf(input.product),
    region: input.region,
    state: input.state ?? null,
    city: input.city ?? null,
    asn: input.asn ?? null,
    sessionId: input.sessionId,
    sesstime: input.sesstime,
  });
}

/**
 * The session's requests at `at`, reported as a gateway node reports them: on the session's exit, with its key's
 * generation (a new session's first request is its start).
 */
async function carry(
  ctx: DomainContext,
  input: SessionRequest,
  username: string,
  session: SessionSnapshot,
  sticky: StickyChoice,
  at: number,
): Promise<void> {
  if (input.requests === 0) return;
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
    exitIps: [sticky.exitIp],
    sessionGen: sticky.generation,
    session: session.id,
  });
  await reportSyntheticUsage(ctx, records);
}
