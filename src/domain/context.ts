import { type Database, database } from "../db/client";
import type { AccountRow, Plan, Product } from "../db/schema";
import type { KeyScopes, MemberRole } from "../vocabulary";

/** What every domain verb runs with: the database and the bindings. Time comes from `platform/clock`. */
export interface DomainContext {
  db: Database;
  env: Cloudflare.Env;
  /**
   * Set on API requests: a change of the caller's account is told to the caller's key guard in the one call
   * the request makes after its handler (`settle`), instead of a call of its own.
   */
  keySettlement?: { keyId: string; accountId: string; changedAccount: AccountRow | null };
  /** Who acts, on API and admin requests: their changes are written to the audit log. Jobs have none. */
  actor?: Actor;
  /** Set when the request recorded an event that a webhook endpoint awaits: the prompt fan-out follows it. */
  awaitedEvents?: boolean;
  /** Set where work may go on after the answer (the usage route's live tails); without it, the work is awaited. */
  waitUntil?: (work: Promise<unknown>) => void;
}

export function domainContext(env: Cloudflare.Env): DomainContext {
  return { db: database(env.DB), env };
}

/**
 * Who is calling: resolved from the API key (or a member's session) by the auth middleware and its guard. Keys and
 * members are authorized alike, by `scopes`: a member's are its role's.
 */
export interface Principal {
  /** The API key of the call; null when a member acts through a signed-in session. */
  keyId: string | null;
  /** The person acting (a signed-in member); null: an API key alone. */
  member: MemberIdentity | null;
  /** The guard that admitted the call and keeps its rate limits and idempotency: the key's id, or the member's. */
  guardId: string;
  accountId: string;
  plan: Plan;
  /** The key's product scope; null = every product. */
  products: Product[] | null;
  /** The key's access per area; null = a full key. */
  scopes: KeyScopes | null;
  /** The sub-users the key is bound to (it sees and acts on them alone); null = not bound. */
  subuserIds: string[] | null;
  /**
   * The member whose API keys alone the caller sees and manages: a developer, or a key a developer made (and the
   * keys it makes stay the developer's); null = every key of the account.
   */
  keysOf: string | null;
  /** When the key stops working (ms); null = never. */
  keyExpiresAt: number | null;
  /** The SHA-256 of the token this call used (the key's current one, one a rotation replaced, or the session's). */
  tokenHash: string;
  /** When a rotation's grace for that token ends (ms); null = it is the key's current token. */
  tokenReplacedUntil: number | null;
  /** The guard's revision of the account's data for this request (see db/account-cache). */
  accountRevision: string;
  /** false for a `test_` key, which acts on the account's sandbox twin (domain/sandbox). */
  livemode: boolean;
}

/**
 * A member acting: through a session (`sessionId`), or through an OAuth grant (`grant`: its client and the scopes
 * it was given; the principal's scopes are then those within the role's). Otherwise its role's scopes are the
 * principal's.
 */
export interface MemberIdentity {
  id: string;
  email: string;
  role: MemberRole;
  /** The session the call came through; null when it came another way. */
  sessionId: string | null;
  /** When that session ends at the latest (its absolute timeout, ms); null without a session. */
  sessionEndsAt: number | null;
  /** The OAuth grant the call came through (an AI assistant on `/mcp`); absent otherwise. */
  grant?: { id: string; clientId: string; clientName: string } | null;
}

/** Who made a change: set for each API request by the caller's guard (or by the admin API), for the audit log. */
export interface Actor {
  /** The acting API key; null = a member through a session, or an operator through the admin API. */
  keyId: string | null;
  /** The person who acted (id and email as they were then); null = a key alone, or an operator. */
  member?: { id: string; email: string } | null;
  /** The OAuth client (an AI assistant) the member acted through on `/mcp`; absent otherwise. */
  client?: { id: string; name: string } | null;
  sourceIp: string | null;
  requestId: string;
}
