// What a node and the API say to each other (docs/gateway.md), typed from the API's own definitions: the route
// schemas of the node contract, the gate's snapshot and the hub's pushes. Type-only imports: Node erases them, so the
// gateway runs none of the Worker's code; a field the API renames or drops is a type error here.
import type { z } from "@hono/zod-openapi";
import type { route as authorizeRoute } from "../src/internal/gateway/authorize-proxy-request.ts";
import type { route as snapshotsRoute } from "../src/internal/gateway/get-node-snapshots.ts";
import type { route as releaseRoute } from "../src/internal/gateway/release-lease.ts";
import type { route as leasesRoute } from "../src/internal/gateway/renew-node-leases.ts";
import type { route as usageRoute } from "../src/internal/gateway/report-usage.ts";
import type { GatewayErrorCode, LIMIT_SERVICE_CODE, RefusalStatus } from "../src/platform/gateway-rules.ts";

export type { GatewayPush, NodeFrame, PongFrame } from "../src/durable-objects/gateway-hub/contract.ts";

import type { NodeSnapshotOnWire } from "../src/durable-objects/subuser-gate/contract.ts";
export type SubuserSnapshot = NodeSnapshotOnWire;

/** The schema of a JSON body or answer (`jsonBody`, `jsonContent`). */
type JsonSchema<C> = C extends { content: { "application/json": { schema: infer S extends z.ZodType } } } ? S : never;
/** The JSON body a route takes, as a node sends it (before the schema's transforms). */
export type RequestOf<R> = R extends { request: { body: infer B } } ? z.input<JsonSchema<B>> : never;
/** The JSON a route answers with `status`. */
export type AnswerOf<R, S extends number> = R extends { responses: Record<S, infer A> }
  ? z.output<JsonSchema<A>>
  : never;

/** `POST /internal/gateway/subusers`: snapshots of the names asked for, and the names with no sub-user. */
export type SubusersAnswer = AnswerOf<typeof snapshotsRoute, 200>;

/** One renewal of `POST /internal/gateway/leases` (the body's `node` and `slot` are the client's). */
export type LeaseRenewal = RequestOf<typeof leasesRoute>["leases"][number];
export type LeasesAnswer = AnswerOf<typeof leasesRoute, 200>;
/** A node's new shares of one sub-user's product. */
export type LeaseGrant = LeasesAnswer["leases"][number];

/** `POST /internal/gateway/authorize` (ISP's per-connection decisions). */
export type AuthorizeRequest = RequestOf<typeof authorizeRoute>;
export type AuthorizeDecision = AnswerOf<typeof authorizeRoute, 200>;
/** An allow of `authorize`: a lease to release when the connection closes, cached for `cache_ttl_s`. */
export type AuthorizeAllowed = Extract<AuthorizeDecision, { allow: true }>;

export type ReleaseRequest = RequestOf<typeof releaseRoute>;
export type ReleaseAnswer = AnswerOf<typeof releaseRoute, 200>;

/** `POST /internal/gateway/usage`: a batch of records, one per proxied request or tunnel. */
export type UsageBatch = RequestOf<typeof usageRoute>;
export type UsageRecord = UsageBatch["records"][number];
export type UsageAnswer = AnswerOf<typeof usageRoute, 202>;

/** A username's target as decisions carry it (residential or mobile; `authorize`'s field names). */
export type ProxyTarget = Extract<AuthorizeAllowed["target"], { type: "res" | "mob" }>;

/**
 * A refusal as decisions carry it (the contract's names): its status and code from the rules' catalogue
 * (src/platform/gateway-rules.ts); a 429 carries the service code and when to retry.
 */
export interface Refused {
  allow: false;
  status: RefusalStatus;
  error_code: GatewayErrorCode;
  service_code?: typeof LIMIT_SERVICE_CODE;
  retry_after_s?: number;
}

/**
 * A sticky session as the node decides it (docs/gateway.md, "Sticky sessions"), with no call: its key (the username,
 * lower-cased), the key's generation from the sub-user's snapshot, and the exit every node computes from the two;
 * `repinned`: the exit moved since this node last gave it for that key and generation.
 */
export interface NodeSession {
  key: string;
  generation: number;
  exit_ip: string;
  repinned: boolean;
}

/**
 * The node's own allow (docs/gateway.md, "Deciding at the node"): no lease (the node holds its shares itself), the
 * username's target, its sticky session when it names one, and the sub-user's account and signed owner from the
 * snapshot (`owner_tag` null: not signed, so the usage records name no owner).
 */
export interface NodeAllowed {
  allow: true;
  subuser: string;
  product: "residential" | "mobile";
  lease: null;
  target: ProxyTarget;
  session: NodeSession | null;
  account?: string;
  owner_tag?: string | null;
  /** The sub-user's target rules from the snapshot: the proxy checks each request's target against them. */
  target_rules?: SubuserSnapshot["target_rules"];
}

/** Every decision a proxy acts on: the node's own, or `authorize`'s (ISP). */
export type GatewayDecision = NodeAllowed | AuthorizeAllowed | Refused;
export type Allowed = Extract<GatewayDecision, { allow: true }>;
