import { GatewayHubClient } from "../../durable-objects/gateway-hub";
import type { NodeSnapshot, SessionPin, ShareGrant, ShareRenewal } from "../../durable-objects/subuser-gate/contract";
import { now } from "../../platform/clock";
import { isSandboxName } from "../../platform/gateway-rules";
import { logInfo } from "../../platform/logger";
import { STANDING_GRACE_MS } from "../../platform/standing-shares";
import type { DomainContext } from "../context";
import { subuserGate } from "../subusers/gate-sync";
import { sessionSpecOf } from "./authorize";
import { parseUsername } from "./username";

/**
 * The node side of the gateway contract (docs/gateway.md, "Deciding at the node"): a node decides every request
 * itself from the sub-user's snapshot and its leased shares, and asks its gate once per sticky session.
 */

const GATEWAY_NAME = /^[a-z0-9]{1,32}$/;

/** The snapshots of the names a node asks for; the names with no sub-user (sandbox ones included) are unknown. */
export async function nodeSnapshots(
  ctx: DomainContext,
  names: string[],
): Promise<{ snapshots: NodeSnapshot[]; unknown: string[] }> {
  const unique = [...new Set(names)];
  const found = await Promise.all(
    unique.map((name) => (isRoutable(name) ? subuserGate(ctx, name).snapshot() : Promise.resolve(null))),
  );
  return {
    snapshots: found.filter((snapshot): snapshot is NodeSnapshot => snapshot !== null),
    unknown: unique.filter((_, index) => found[index] === null),
  };
}

/** How long an isolate trusts the hub's word that a node holds a slot: less than the hub's grace before reuse. */
const SLOT_HELD_KEPT_MS = STANDING_GRACE_MS / 2;
const slotsHeld = new Map<string, number>();

/**
 * The slot a node's renewal may stand for: the one it names if the hub says it holds it on an open feed, else
 * null (the renewal counts as from no slot, so a node cannot take another's standing shares). The hub hands a
 * freed slot to another node only `STANDING_GRACE_MS` after its socket closed, so its word is kept for half that.
 */
export async function slotHeldBy(ctx: DomainContext, node: string, slot: number | null): Promise<number | null> {
  if (slot === null) return null;
  const key = `${node}\n${slot}`;
  const at = now();
  if ((slotsHeld.get(key) ?? 0) > at) return slot;
  if (!(await new GatewayHubClient(ctx.env).holdsSlot(node, slot))) {
    logInfo("gateway_slot_claim_refused", { node, slot });
    return null;
  }
  if (slotsHeld.size >= MAX_SLOTS_REMEMBERED) slotsHeld.clear();
  slotsHeld.set(key, at + SLOT_HELD_KEPT_MS);
  return slot;
}
const MAX_SLOTS_REMEMBERED = 10_000;

/** A node's renewals, each answered by its sub-user's gate (null: an unknown name). */
export function renewNodeShares(
  ctx: DomainContext,
  renewals: Array<ShareRenewal & { name: string }>,
): Promise<Array<ShareGrant | null>> {
  return Promise.all(
    renewals.map(({ name, ...renewal }) =>
      isRoutable(name) ? subuserGate(ctx, name).renewShares(renewal) : Promise.resolve(null),
    ),
  );
}

export type NodeSessionAnswer =
  | { ok: true; session: SessionPin }
  | { ok: false; problem: "unknown-subuser" | "not-sticky" };

/** The sticky session of a username (its `session` and `sesstime` segments) at its sub-user's gate. */
export async function pinNodeSession(
  ctx: DomainContext,
  request: { name: string; username: string; exitIp: string },
): Promise<NodeSessionAnswer> {
  const parsed = parseUsername(request.username, ctx.env.GATEWAY_USER_PREFIX);
  if (!parsed.ok || parsed.value.name !== request.name) return { ok: false, problem: "not-sticky" };
  const spec = sessionSpecOf(request.username, parsed.value);
  if (!spec) return { ok: false, problem: "not-sticky" };
  if (!isRoutable(request.name)) return { ok: false, problem: "unknown-subuser" };
  const gate = subuserGate(ctx, request.name);
  if ((await gate.snapshot()) === null) return { ok: false, problem: "unknown-subuser" };
  return { ok: true, session: await gate.pinSession(spec, request.exitIp) };
}

/** Sandbox sub-users exist only for the API's test helpers: to the proxy network they are unknown names. */
function isRoutable(name: string): boolean {
  return GATEWAY_NAME.test(name) && !isSandboxName(name);
}
