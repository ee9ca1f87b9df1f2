// The node's own decisions (docs/gateway.md, "Deciding at the node"): every request of a sub-user is decided here,
// from its snapshot and the node's share of its limits (its slot's standing share while the sub-user is quiet, else
// a lease); the API is asked when the node first meets a sub-user, for busy sub-users' leases, and after a push it
// may have missed. Sticky sessions are decided here too, with no call (session-cache.ts). ISP stays on
// ConnectionAuth.

// The API's own username grammar (Node runs the TypeScript as it is): the node parses exactly as the API does.
import { type GatewayTarget, parseUsername } from "../src/domain/gateway/username.ts";
import {
  type AccessState,
  accessRefusal,
  type GatewayErrorCode,
  isSandboxName,
  type Limits,
  limited,
  placeRefusal,
  type Refusal,
  refusal,
  targetRefusal,
} from "../src/platform/gateway-rules.ts";
import { standingShare } from "../src/platform/standing-shares.ts";
import { generationOf, sessionKey } from "../src/platform/sticky-sessions.ts";
import { type ApiClient, AUTH_UNAVAILABLE, ConnectionAuth } from "./api-client.ts";
import { type Clock, realClock, type TimerHandle } from "./clock.ts";
import { allowedRules, FailureThrottle, nextLapse, rulesOf, sha256Hex, whitelisted } from "./credentials.ts";
import type { Exit } from "./exits.ts";
import { type LeaseEntry, LeaseManager, type LeaseOptions } from "./lease-manager.ts";
import type { GatewayConnection, GatewayDecider, ProxyCredentials } from "./proxy-server.ts";
import { type ChangeFeed, type ChangeFeedOptions, changeFeed } from "./push-client.ts";
import { StickyExits } from "./session-cache.ts";
import { SnapshotCache } from "./snapshot-cache.ts";
import type {
  Allowed,
  GatewayDecision,
  GatewayPush,
  NodeAllowed,
  NodeSession,
  ProxyTarget,
  Refused,
  SubuserSnapshot,
} from "./wire.ts";

/** While the change feed is down, held snapshots are fetched again this often. */
const REFRESH_MS = 5000;
/**
 * A snapshot unused this long (and with no open connection) is forgotten. Pushes keep held ones current, so a
 * sub-user the node meets at least daily costs no fetch (about 300 bytes each: 10 M sub-users fit in 3 GB).
 */
const SNAPSHOT_KEPT_MS = 24 * 60 * 60_000;
const NO_LIMITS: Limits = { concurrent: null, rps: null };

/** A refusal of the rules (src/platform/gateway-rules.ts) as the node's decisions carry it (the contract's names). */
function onWire({ status, errorCode, retryAfterS, serviceCode }: Refusal): Refused {
  return {
    allow: false,
    status,
    error_code: errorCode,
    ...(serviceCode === undefined ? {} : { service_code: serviceCode, retry_after_s: retryAfterS }),
  };
}
const refuse = (errorCode: GatewayErrorCode) => onWire(refusal(errorCode));

/** What a request presents, as the access rules check it. */
interface Access {
  product: NodeAllowed["product"];
  passwordHash: string | null;
  sourceIp: string;
}

/** A snapshot as the rules read it: rotated-out passwords' ends in ms (each snapshot converted once). */
const accessStates = new WeakMap<SubuserSnapshot, AccessState>();
function accessStateOf(snapshot: SubuserSnapshot): AccessState {
  let state = accessStates.get(snapshot);
  if (!state) {
    const passwords = snapshot.passwords.map(({ sha256, until }) => ({
      sha256,
      until: until === null ? null : Date.parse(until),
    }));
    state = {
      status: snapshot.status,
      products: snapshot.products,
      passwords,
      exhausted: snapshot.exhausted,
      cap: snapshot.cap,
      dayCap: snapshot.day_cap ?? null,
      lifetimeCapReached: snapshot.lifetime_cap_reached ?? false,
      expiresAt: snapshot.expires_at ? Date.parse(snapshot.expires_at) : null,
    };
    accessStates.set(snapshot, state);
  }
  return state;
}

/** The rules' access check against a snapshot. Null when allowed. */
function accessRefused(snapshot: SubuserSnapshot, { product, passwordHash, sourceIp }: Access, at: number) {
  const whitelistedHere = () => whitelisted(snapshot, product, sourceIp);
  const refused = accessRefusal(accessStateOf(snapshot), { product, passwordHash, whitelisted: whitelistedHere }, at);
  return refused && onWire(refused);
}

/**
 * Takes the request's place in the node's share of the sub-user's rps (and, for a new connection, concurrency), by
 * the rules the gate runs on its own counts; the refusal when the share is used up, else null.
 */
function takePlace(lease: LeaseEntry, newConnection: boolean, at: number): Refused | null {
  // Called once the entry is ready, or still live after growing: a share is in force.
  const refused = placeRefusal(lease.share(at)!, lease.admitted, lease.open, newConnection, at);
  if (refused?.errorCode === "concurrent-limit") lease.waiting.add(at);
  if (refused) return onWire(refused);
  lease.admitted.add(at);
  return null;
}

/** The sub-user's place a connection holds: whose, under which lease, and what it presented. */
interface Admission {
  key: string;
  name: string;
  lease: LeaseEntry | null;
  access: Access;
}

/** The node's slot from the change feed's `hello`; null while it has none. */
interface FeedSlot {
  slot: number;
  slots: number;
  usableAt: number;
}

/** The node decider as the gateway runs it: its connections, and what tests and tools look into. */
export interface NodeDecider extends GatewayDecider {
  /** Takes a message as if the change feed had carried it (tests). */
  push(message: GatewayPush): void;
  snapshots: SnapshotCache;
  leases: LeaseManager;
  close(): void;
}

/**
 * `api`: api-client.ts (or a stub with `subusers`, `leases`, `changes`, and `authorize`/`release` for ISP). `clock`:
 * the time and timers the decisions and leases run on (a simulation's, or the real ones). `feed`: the change feed to
 * open (`true`: the API's; `false`: none, for tests that push by hand; a function: a stand-in that opens one, e.g. a
 * simulation's). `leaseOptions`: LeaseManager's timings.
 */
export function nodeDecider({
  api,
  prefix = "user",
  clock = realClock,
  feed = true,
  log = console,
  leaseOptions = {},
}: {
  api: Pick<ApiClient, "subusers" | "leases" | "changes" | "authorize" | "release">;
  prefix?: string;
  clock?: Clock;
  feed?: boolean | ((options: ChangeFeedOptions) => ChangeFeed);
  log?: Pick<Console, "error">;
  leaseOptions?: LeaseOptions;
}): NodeDecider {
  const now = () => clock.now();
  /** Open connections admitted per sub-user name, re-checked when its snapshot changes. */
  const admittedByName = new Map<string, Set<NodeConnection>>();
  const lapseTimers = new Map<string, TimerHandle>();
  const throttle = new FailureThrottle();
  const snapshots = new SnapshotCache({ fetch: (names) => api.subusers(names), onChange: snapshotChanged, clock });
  const leases = new LeaseManager({
    api,
    clock,
    log,
    onVersion: refetchOlderThan,
    slot: () => (slotVouched() ? (feedSlot?.slot ?? null) : null),
    ...leaseOptions,
  });
  const stickyExits = new StickyExits({ clock });
  /** The node's slot from the change feed's `hello`: `{slot, slots, usableAt}`; null while it has none. */
  let feedSlot: FeedSlot | null = null;
  /** The held snapshots were fetched again since the feed last connected (pushes may have been missed before). */
  let caughtUp = false;

  /** Whether the node may use its slot's standing shares now: the feed vouches it has read every push. */
  function slotVouched(): boolean {
    return feedSlot !== null && caughtUp && feedConnection?.vouched() === true && now() >= feedSlot.usableAt;
  }

  /** The entry's standing share under `snapshot`, or null: none (the limits are leased, or the slot is not vouched). */
  function standingOf(snapshot: SubuserSnapshot | null, entry: LeaseEntry): Limits | null {
    if (!snapshot?.standing?.includes(entry.product) || snapshot.version <= entry.leasedAtVersion) return null;
    if (!slotVouched() || feedSlot === null) return null;
    const { slots, slot } = feedSlot;
    const part = (limit: number | null) => (limit === null ? null : standingShare(limit, slots, slot, snapshot.name));
    return { concurrent: part(entry.limits.concurrent), rps: part(entry.limits.rps) };
  }

  /** The entry follows `snapshot` (null: forgotten): its version, and its standing share under it. */
  function follow(entry: LeaseEntry, snapshot: SubuserSnapshot | null): void {
    if (snapshot) entry.snapshotVersion = snapshot.version;
    entry.standing = standingOf(snapshot, entry);
  }

  function snapshotChanged(name: string): void {
    const changed = snapshots.peek(name);
    leases.restand(name, (entry) => follow(entry, changed));
    recheck(name);
    clock.clearTimeout(lapseTimers.get(name));
    lapseTimers.delete(name);
    const snapshot = snapshots.peek(name);
    const lapse = snapshot && nextLapse(snapshot, now());
    if (lapse === null || lapse === undefined) return;
    // A rotated-out password stops working at its `until`, and the sub-user at its `expires_at`, with no push: its
    // connections are re-checked then.
    lapseTimers.set(
      name,
      clock.setTimeout(() => snapshotChanged(name), lapse - now() + 1),
    );
  }

  /**
   * Tunnels whose sub-user no longer admits them, or whose target its rules now keep it from, are closed; other
   * connections' next request is refused anyway.
   */
  function recheck(name: string): void {
    const snapshot = snapshots.peek(name);
    for (const connection of admittedByName.get(name) ?? []) {
      const access = connection.admission?.access;
      const host = connection.tunnelHost;
      const refused =
        !snapshot ||
        (access !== undefined && accessRefused(snapshot, access, now())) ||
        (host !== null && targetRefusal(rulesOf(snapshot.target_rules), host));
      if (refused) connection.revoke();
    }
  }

  function refetchOlderThan(name: string, version: number): void {
    const held = snapshots.peek(name);
    if (!held || held.version >= version) return;
    snapshots.refresh([name]).catch((error: Error) => log.error(`[gateway] snapshot refetch failed: ${error.message}`));
  }

  function failedCredentials(connection: NodeConnection, refused: Refused): Refused {
    throttle.fail(connection.sourceIp, now());
    return refused;
  }

  async function decide(
    connection: NodeConnection,
    { username, password, repin = false }: ProxyCredentials,
  ): Promise<NodeAllowed | Refused> {
    const parsed = parseUsername(username, prefix);
    if (!parsed.ok) return refuse(parsed.error);
    const { name, product } = parsed.value;
    const target = targetOnWire(parsed.value.target);
    const wait = throttle.retryAfterS(connection.sourceIp, now());
    if (wait > 0) return onWire(limited("auth-throttled", wait));
    if (isSandboxName(name)) return failedCredentials(connection, refuse("auth-failed"));

    let snapshot: SubuserSnapshot | null;
    try {
      snapshot = await snapshots.get(name);
    } catch (error) {
      log.error(`[gateway] sub-user lookup failed: ${(error as Error).message}`);
      return AUTH_UNAVAILABLE;
    }
    if (!snapshot) return failedCredentials(connection, refuse("auth-failed"));

    const limits = snapshot.limits?.[product] ?? NO_LIMITS;
    const lease = limits.concurrent !== null || limits.rps !== null ? leases.entry(name, product, limits) : null;
    if (lease) follow(lease, snapshot);
    // A snapshot nobody confirmed lately may be out of date: it is trusted only within a live share.
    if (!snapshots.fresh(name) && !lease?.live(now())) return AUTH_UNAVAILABLE;
    const access: Access = {
      product,
      passwordHash: password ? sha256Hex(password) : null,
      sourceIp: connection.sourceIp,
    };
    const refused = accessRefused(snapshot, access, now());
    if (refused) return refused.status === 407 ? failedCredentials(connection, refused) : refused;

    const key = `${name}\n${product}`;
    const newConnection = connection.admission?.key !== key;
    if (lease) {
      lease.attempted.add(now());
      if (newConnection) lease.pending += 1;
      const ready = await leases.ready(lease).finally(() => {
        if (newConnection) lease.pending -= 1;
      });
      if (!ready) return AUTH_UNAVAILABLE;
      for (;;) {
        // From a check to the admission nothing awaits, so concurrent requests cannot both take the last place.
        const refused = takePlace(lease, newConnection, now());
        if (!refused) break;
        if (!(await leases.grow(lease, refused.error_code === "rps-limit" ? "rps" : "concurrent"))) return refused;
        if (!lease.live(now())) return AUTH_UNAVAILABLE;
      }
    }
    if (newConnection) connection.admit({ key, name, lease, access });
    else if (connection.admission) connection.admission.access = access;

    let session: NodeSession | null = null;
    if (target.session_id !== null) {
      // The snapshot held now: a push received while the lease was awaited may have moved the generation.
      const held = snapshots.peek(name) ?? snapshot;
      const stickyKey = sessionKey(username);
      const generation = generationOf(held.generations, stickyKey);
      const exit = stickyExits.exitOf(product, stickyKey, generation, { repin });
      session = { key: stickyKey, generation, exit_ip: exit.ip, repinned: exit.repinned };
    }
    return {
      allow: true,
      subuser: snapshot.subuser,
      product,
      lease: null,
      target,
      session,
      account: snapshot.account,
      owner_tag: snapshot.owner_tag,
      target_rules: snapshot.target_rules ?? null,
    };
  }

  /** One client connection: its admission (which sub-user's place it holds) and the tunnel to close if revoked. */
  class NodeConnection implements GatewayConnection {
    readonly sourceIp: string;
    admission: Admission | null = null;
    /** The target of the connection's tunnel, re-checked against its sub-user's rules (null: none open). */
    tunnelHost: string | null = null;
    #closed = false;
    #onRevoked: (() => void) | null = null;
    #isp: ConnectionAuth | null = null;
    #ispCredentials: ProxyCredentials | null = null;
    #stopIspWatch: (() => void) | null = null;

    constructor(sourceIp: string) {
      this.sourceIp = sourceIp;
    }

    decide(credentials: ProxyCredentials): Promise<GatewayDecision> {
      if (!credentials.destIp) return decide(this, credentials);
      this.#isp ??= new ConnectionAuth(api, this.sourceIp);
      this.#ispCredentials = credentials;
      return this.#isp.decide(credentials);
    }

    /** The exit an allow's requests leave from: an ISP lease's release names it. */
    useExit(exit: Exit, decision: Allowed): void {
      if (decision.product === "isp") this.#isp?.useExit(exit);
    }

    /** Whether the allow's target rules let a request reach `host`: the refusal, or null (the host is remembered). */
    reach(host: string, decision: Allowed): Refused | null {
      const refused = targetRefusal(allowedRules(decision), host);
      if (refused) return onWire(refused);
      this.tunnelHost = host;
      return null;
    }

    /** `onRevoked`: closes the connection's tunnel once its sub-user no longer admits it. */
    watch(onRevoked: () => void): void {
      if (this.#ispCredentials && this.#isp) this.#stopIspWatch = this.#isp.watch(this.#ispCredentials, onRevoked);
      else this.#onRevoked = onRevoked;
    }

    admit(admission: Admission): void {
      this.#release();
      // The client may have left while its request was decided: a closed connection holds no place.
      if (this.#closed) return;
      this.admission = admission;
      if (admission.lease) leases.opened(admission.lease);
      let admitted = admittedByName.get(admission.name);
      if (!admitted) {
        admitted = new Set();
        admittedByName.set(admission.name, admitted);
      }
      admitted.add(this);
    }

    revoke(): void {
      const onRevoked = this.#onRevoked;
      this.#onRevoked = null;
      onRevoked?.();
    }

    close(): void {
      this.#closed = true;
      this.#release();
      this.#stopIspWatch?.();
      this.#isp?.close();
    }

    #release(): void {
      const admission = this.admission;
      if (!admission) return;
      this.admission = null;
      if (admission.lease) leases.closed(admission.lease);
      const admitted = admittedByName.get(admission.name);
      admitted?.delete(this);
      if (admitted?.size === 0) admittedByName.delete(admission.name);
    }
  }

  function onPush(message: GatewayPush): void {
    switch (message.type) {
      case "subuser": {
        const { name } = message.subuser;
        snapshots.forgetUnknown(name);
        // Only sub-users the node has met (or is fetching) are kept: the others are fetched when first met.
        if (snapshots.has(name)) snapshots.apply(message.subuser);
        break;
      }
      case "hello":
        feedSlot =
          message.slot === null
            ? null
            : { slot: message.slot, slots: message.slots, usableAt: now() + message.standing_after_ms };
        break;
      case "lease_cut":
        leases.cut(message.name, message.product);
        break;
      // `session_ended` (no longer sent) is ignored: a termination moves the key's generation in the `subuser` push.
    }
  }

  const openFeed = feed === true ? changeFeed : feed;
  const feedConnection: ChangeFeed | null = openFeed
    ? openFeed({
        target: () => api.changes(),
        log,
        onMessage: onPush,
        onState(connected) {
          snapshots.feedConnected(connected);
          feedSlot = null;
          caughtUp = false;
          feedGeneration += 1;
          const generation = feedGeneration;
          // Pushes may have been missed while the feed was down: standing shares wait until the node caught up.
          if (connected) refreshHeld().then((done) => (caughtUp = done && generation === feedGeneration));
        },
      })
    : null;

  let feedGeneration = 0;
  let refreshFailing = false;
  /** Fetches every held snapshot again; resolves whether that worked. */
  function refreshHeld(): Promise<boolean> {
    return snapshots.refresh().then(
      () => {
        refreshFailing = false;
        return true;
      },
      (error: Error) => {
        if (!refreshFailing) log.error(`[gateway] snapshot refresh failed: ${error.message}`);
        refreshFailing = true;
        return false;
      },
    );
  }

  const maintenance = clock.setInterval(() => {
    if (!snapshots.isFeedConnected) refreshHeld();
    snapshots.sweep(now() - SNAPSHOT_KEPT_MS, (name) => admittedByName.has(name));
    stickyExits.sweep();
  }, REFRESH_MS);

  return {
    connection: (sourceIp) => new NodeConnection(sourceIp),
    push: onPush,
    snapshots,
    leases,
    close() {
      feedConnection?.close();
      leases.stop();
      clock.clearInterval(maintenance);
      for (const timer of lapseTimers.values()) clock.clearTimeout(timer);
    },
  };
}

/** The username's target as decisions carry it (the contract's field names, as `authorize` answers them). */
function targetOnWire({ type, region, state, city, asn, sessionId, sesstime }: GatewayTarget): ProxyTarget {
  return { type, region, state, city, asn, session_id: sessionId, sesstime };
}
