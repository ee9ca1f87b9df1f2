import { performance } from "node:perf_hooks";
import type { AreaStorage } from "../../src/durable-objects/shared/storage-versions";
import type { GateConfig, SessionSpec } from "../../src/durable-objects/subuser-gate/contract";
import { SubuserGate } from "../../src/durable-objects/subuser-gate/subuser-gate";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { SessionSnapshot } from "../../src/durable-objects/traffic-store/contract";
import { STANDING_GRACE_MS, standingShare } from "../../src/platform/standing-shares";
import { accountShares, type Mix, random, SUBUSERS } from "./fleet";
import { NodeSqlStorage } from "./node-sql";
import { objectGbSeconds, PRICES } from "./platform";
import { timedCalls } from "./timed-calls";

/**
 * The access path as built (docs/gateway.md, "Deciding at the node"): what deciding every request at the gateway
 * nodes costs the API, and how one busy sub-user's gate holds its limits across many nodes. The gate is the real
 * `SubuserGate` on `node:sqlite` (as the metering simulation runs the real store): its alarms run when due and its
 * pushes reach every node at once; the nodes follow the contract.
 */

/** A node batches its calls: at most one request to the API per window. */
const NODE_BATCH_WINDOW_MS = 50;
/** A node keeps a sub-user's snapshot this long after its last use (`gateway/node-decider.ts`). */
const SNAPSHOT_KEPT_MS = 86_400_000;
/** Changes nodes must hear of (PATCHes, rotations, pool and cap flips): one per sub-user per day, stated. */
const CHANGES_PER_SUBUSER_PER_DAY = 1;
/** New connections a gateway node serves per second (sizes the fleet). */
const CONNECTIONS_PER_NODE = 3_300;
/** The fleet's node slots (`GATEWAY_SLOTS`): its nodes, rounded up to a power of two for room to grow. */
const slotsFor = (nodes: number) => 2 ** Math.ceil(Math.log2(nodes));
/** A fleet sub-user's limits: the Starter plan's residential defaults (spec §8.2, §8.3). */
const FLEET_LIMITS = { concurrent: 200, rps: 200 };
/** Each request is a new connection, open this long. */
const HOLD_MS = 2_000;
/** A fifth of requests use one of the sub-user's two sticky sessions, each living 30 minutes (as `fleet.ts`). */
const STICKY_SHARE = 0.2;
const SESSION_MINUTES = 30;
/** Every node starts with no share: the first second is the fleet's cold start, reported apart. */
const WARM_UP_MS = 1_000;
/** A node asks for its demand with this headroom, plus a floor (`gateway/lease-manager.ts`). */
const DEMAND_HEADROOM = 1.2;
const DEMAND_FLOOR = 5;
/** A node asks to grow its share at most this often. */
const RENEW_AT_MOST_EVERY_MS = 250;
/** A node renews a lease in use this long before it ends. */
const RENEW_BEFORE_MS = 2_500;
/** A node gives back a share its demand fell far below at most this often. */
const GIVE_BACK_EVERY_MS = 1000;
/** A node that waits asks again this soon: the nodes cut for it renew at once. */
const RETRY_WHILE_WAITING_MS = 50;
/** Sub-user request rates simulated on the real gate (requests/s), two to a decade; others are interpolated. */
const RATE_CLASSES = Array.from({ length: 17 }, (_, i) => 10 ** (-6 + i / 2));

/** What the API spends on one sub-user's requests, per request, measured on the real gate. */
interface PerRequest {
  /** Snapshots fetched: gate calls. */
  snapshots: number;
  /** Lease renewals: gate calls. */
  renewals: number;
  /** Sticky sessions pinned: gate calls. */
  pins: number;
  /** Gate alarms (handing standing shares back, telling the session index). */
  alarms: number;
  /** Pushes published through the hub. */
  publishes: number;
  /** Calls to the account's store telling its session index of sessions started (from gate alarms). */
  indexCalls: number;
  /** Rows written by the gate and by the store's session index. */
  rowsWritten: number;
  rowsRead: number;
  /** CPU of the gate's and the session index's calls, measured. */
  cpuMs: number;
  refused: number;
}

const PER_REQUEST_KEYS = [
  "snapshots",
  "renewals",
  "pins",
  "alarms",
  "publishes",
  "indexCalls",
  "rowsWritten",
  "rowsRead",
  "cpuMs",
  "refused",
] as const;

export interface AccessPathCost {
  nodes: number;
  slots: number;
  fanOutPerChange: number;
  perSecond: { workerRequests: number; gateCalls: number; hubCalls: number; rowsWritten: number };
  /** Each line, and the part of it that sticky-session pins cause. */
  cost: Array<{ line: string; usdPerBillion: number; sessionsUsdPerBillion: number }>;
  /** Per-request figures of each simulated rate class (requests/s per sub-user). */
  classes: Array<{ rate: number } & PerRequest>;
}

/**
 * The access path's bill per billion gateway requests when every request is a new connection. Each rate class is
 * one sub-user on the real gate, with and without its sticky sessions: requests (Poisson, open 2 s) land on random
 * nodes of the fleet. Every account's sub-users are priced at their rate's figures (log-interpolated between
 * classes), weighted by the account's requests.
 */
export async function accessPathCost(mix: Mix, requestsPerMinute: number, accounts: number): Promise<AccessPathCost> {
  const perSecond = requestsPerMinute / 60;
  const nodes = Math.max(3, Math.ceil(perSecond / CONNECTIONS_PER_NODE));
  const classes: Array<{ rate: number } & PerRequest> = [];
  const noSticky: Array<{ rate: number } & PerRequest> = [];
  for (const rate of RATE_CLASSES) {
    classes.push({ rate, ...(await simulateSubuser(rate, nodes, STICKY_SHARE)) });
    noSticky.push({ rate, ...(await simulateSubuser(rate, nodes, 0)) });
  }
  const shares = accountShares(mix);
  const weighted = (figures: Array<{ rate: number } & PerRequest>) => {
    const total = Object.fromEntries(PER_REQUEST_KEYS.map((key) => [key, 0])) as unknown as PerRequest;
    for (let a = 0; a < accounts; a++) {
      const share = shares[a] as number;
      const at = interpolate(figures, (share * perSecond) / SUBUSERS);
      for (const key of PER_REQUEST_KEYS) total[key] += share * at[key];
    }
    return bill(total, perSecond, nodes, accounts);
  };
  const all = weighted(classes);
  const withoutSessions = weighted(noSticky);
  return {
    nodes,
    slots: slotsFor(nodes),
    fanOutPerChange: nodes,
    perSecond: all.perSecond,
    cost: Object.entries(all.usd).map(([line, usd]) => ({
      line,
      usdPerBillion: usd,
      sessionsUsdPerBillion: usd - (withoutSessions.usd[line as keyof typeof all.usd] ?? 0),
    })),
    classes,
  };
}

/** The per-second loads and the bill per billion requests of per-request figures at `perSecond` requests/s. */
function bill(perRequest: PerRequest, perSecond: number, nodes: number, accounts: number) {
  const gateCalls = (perRequest.snapshots + perRequest.renewals + perRequest.pins) * perSecond;
  const workerRequests = nodes * Math.min(1000 / NODE_BATCH_WINDOW_MS, gateCalls / nodes);
  const changesPerSecond = (accounts * SUBUSERS * CHANGES_PER_SUBUSER_PER_DAY) / 86_400;
  // Pings (four a second a node) are answered without waking the hub; counted as messages (20 to a request).
  const hubCalls = changesPerSecond + perRequest.publishes * perSecond + (nodes * 4) / 20;
  const indexCalls = perRequest.indexCalls * perSecond;
  const objectCalls = gateCalls + perRequest.alarms * perSecond + hubCalls + indexCalls;
  const rowsWritten = perRequest.rowsWritten * perSecond;
  const rowsRead = perRequest.rowsRead * perSecond;
  const perBillion = (usdPerSecond: number) => (usdPerSecond / perSecond) * 1e9;
  return {
    perSecond: { workerRequests, gateCalls, hubCalls, indexCalls, rowsWritten },
    usd: {
      "Worker requests": perBillion((workerRequests * PRICES.workerRequestsPerMillion) / 1e6),
      "DO requests": perBillion((objectCalls * PRICES.objectRequestsPerMillion) / 1e6),
      "DO duration": perBillion(
        (objectGbSeconds(objectCalls, perRequest.cpuMs * perSecond) * PRICES.objectGbSecondsPerMillion) / 1e6,
      ),
      "DO rows written": perBillion((rowsWritten * PRICES.objectRowsWrittenPerMillion) / 1e6),
      "DO rows read": perBillion((rowsRead * PRICES.objectRowsReadPerMillion) / 1e6),
    },
  };
}

/** The figures at `rate`, log-interpolated between the classes around it (the end classes beyond them). */
function interpolate(classes: Array<{ rate: number } & PerRequest>, rate: number): PerRequest {
  const upper = classes.findIndex((c) => c.rate >= rate);
  if (upper <= 0) return classes[upper === 0 ? 0 : classes.length - 1] as PerRequest;
  const hi = classes[upper] as { rate: number } & PerRequest;
  const lo = classes[upper - 1] as { rate: number } & PerRequest;
  const t = Math.log(rate / lo.rate) / Math.log(hi.rate / lo.rate);
  return Object.fromEntries(
    PER_REQUEST_KEYS.map((key) => [key, lo[key] + t * (hi[key] - lo[key])]),
  ) as unknown as PerRequest;
}

/** A gateway node as the simulations run it: the sub-user's snapshot, its shares, what it has in use. */
interface SimNode {
  name: string;
  slot: number;
  /** The snapshot held: its version, and whether its limits are standing shares (null: not met, or forgotten). */
  view: { version: number; standing: boolean } | null;
  usedAt: number;
  /** The snapshot version the node last asked for a lease at: no standing share until a newer one grants them. */
  leasedAtVersion: number;
  lease: { concurrent: number; rps: number };
  expiresAt: number;
  open: number[];
  admitted: number[];
  attempted: number[];
  lastRenewal: number;
  cutPending: boolean;
  /** Its last renewal granted less than it wanted: the nodes cut meanwhile may have freed some. */
  waiting: boolean;
  /** Sticky sessions pinned here, and until when. */
  sessions: Map<string, number>;
}

function simNodes(count: number): SimNode[] {
  return Array.from({ length: count }, (_, slot) => ({
    name: `node-${slot}`,
    slot,
    view: null,
    usedAt: -Infinity,
    leasedAtVersion: -1,
    lease: { concurrent: 0, rps: 0 },
    expiresAt: 0,
    open: [],
    admitted: [],
    attempted: [],
    lastRenewal: -Infinity,
    cutPending: false,
    waiting: false,
    sessions: new Map(),
  }));
}

const standingInForce = (node: SimNode) => node.view?.standing === true && node.view.version > node.leasedAtVersion;

/**
 * A fleet of nodes in front of one real gate, as `gateway/node-decider.ts` and `lease-manager.ts` behave: the
 * share in force (the slot's standing share, else a live lease), renewals (both limits in one call), the pushes
 * each node takes, and a standing share that ends while in use renewed at once.
 */
function simFleet(
  count: number,
  limits: { concurrent: number; rps: number },
  holdMs: number,
  setNow: (elapsed: number) => void,
) {
  const nodes = simNodes(count);
  const slots = slotsFor(count);
  const acks: SimNode[] = [];
  let clock = 0;
  const gate = realGate(limits, slots, (message, named) => {
    if (message.type === "lease_cut") {
      for (const node of nodes) if (named?.includes(node.name)) node.cutPending = true;
    }
    if (message.type !== "subuser" || !message.subuser) return;
    const pushed = { version: message.subuser.version, standing: message.subuser.standing.includes("residential") };
    for (const node of nodes) {
      if (node.view === null || pushed.version <= node.view.version) continue;
      const before = standingInForce(node);
      node.view = pushed;
      if (before && !standingInForce(node) && (node.open.length > 0 || node.admitted.length > 0)) acks.push(node);
    }
  });
  const calls = { snapshots: 0, renewals: 0, pins: 0 };
  const fleet = {
    nodes,
    gate,
    calls,
    setClock(at: number) {
      clock = at;
      setNow(at);
    },
    shareOf(node: SimNode) {
      if (standingInForce(node)) {
        const part = (limit: number) => standingShare(limit, slots, node.slot, gate.name);
        return { concurrent: part(limits.concurrent), rps: part(limits.rps) };
      }
      return clock < node.expiresAt ? node.lease : null;
    },
    fits(node: SimNode) {
      const share = fleet.shareOf(node);
      return share !== null && node.open.length < share.concurrent && node.admitted.length < share.rps;
    },
    /** Fetches the snapshot when the node has none (or forgot it). */
    meet(node: SimNode) {
      if (node.view === null || clock - node.usedAt > SNAPSHOT_KEPT_MS) {
        calls.snapshots++;
        const snapshot = gate.gate.snapshot();
        if (snapshot) node.view = { version: snapshot.version, standing: snapshot.standing.includes("residential") };
      }
      node.usedAt = clock;
    },
    trim(node: SimNode) {
      while (node.open.length > 0 && (node.open[0] as number) <= clock) node.open.shift();
      while (node.admitted.length > 0 && (node.admitted[0] as number) <= clock - 1000) node.admitted.shift();
      while (node.attempted.length > 0 && (node.attempted[0] as number) <= clock - 1000) node.attempted.shift();
    },
    async renew(node: SimNode): Promise<void> {
      calls.renewals++;
      node.lastRenewal = clock;
      node.cutPending = false;
      // Demand: the last second's attempts, or the last quarter second's four times over when it is rising.
      const attempts = Math.max(node.attempted.length, 4 * node.attempted.filter((t) => t > clock - 250).length);
      const want = {
        concurrent:
          Math.ceil(Math.max(node.open.length + 1, (attempts * holdMs) / 1000) * DEMAND_HEADROOM) + DEMAND_FLOOR,
        rps: Math.ceil(attempts * DEMAND_HEADROOM) + DEMAND_FLOOR,
      };
      const held = fleet.shareOf(node) ?? { concurrent: 0, rps: 0 };
      node.leasedAtVersion = node.view?.version ?? 0;
      const grant = await gate.gate.renewShares({
        node: node.name,
        slot: node.slot,
        product: "residential",
        held,
        open: node.open.length,
        recent: node.admitted.length,
        want,
      });
      if (!grant) throw new Error("the gate does not know its sub-user");
      node.waiting = (grant.concurrent ?? 0) < want.concurrent || (grant.rps ?? 0) < want.rps;
      node.lease = { concurrent: grant.concurrent ?? 0, rps: grant.rps ?? 0 };
      node.expiresAt = grant.expiresAt;
      // A node whose share was lowered confirms at once, so the gate stops counting the share it gave up.
      if (node.lease.concurrent < held.concurrent || node.lease.rps < held.rps) await fleet.renew(node);
    },
    /** Runs the gate's alarms due by `until`, then the renewals its pushes asked for. */
    async advance(until: number) {
      await gate.runAlarmsUntil(until, fleet.setClock);
      for (const node of acks.splice(0)) await fleet.renew(node);
    },
  };
  return fleet;
}

/**
 * One sub-user at `rate` requests/s (Poisson, each a new connection open 2 s, `sticky` of them on one of its two
 * sticky sessions) over `count` nodes holding slots 0…count−1, on the real gate: at least 400 requests and 10
 * minutes. Per request: the gate calls, alarms, pushes and rows written.
 */
async function simulateSubuser(rate: number, count: number, sticky: number): Promise<PerRequest> {
  return withClock(async (setNow) => {
    const rng = random(
      (Math.imul(Math.round(Math.log10(rate) * 1000), 0x9e3779b1) ^ Math.imul(count, 0x85ebca6b)) >>> 0,
    );
    const fleet = simFleet(count, FLEET_LIMITS, HOLD_MS, setNow);
    // As in a fleet that has run for long: each node last used the sub-user's snapshot as its own requests say.
    for (const node of fleet.nodes) {
      fleet.meet(node);
      node.usedAt = (Math.log(1 - rng()) * 1000 * count) / rate;
    }
    fleet.calls.snapshots = 0;
    const requests = Math.max(400, Math.ceil(rate * 600));
    let clock = 0;
    let refused = 0;
    for (let i = 0; i < requests; i++) {
      clock += -Math.log(1 - rng()) * (1000 / rate);
      await fleet.advance(clock);
      const node = fleet.nodes[Math.floor(rng() * count)] as SimNode;
      for (const other of fleet.nodes) fleet.trim(other);
      fleet.meet(node);
      node.attempted.push(clock);
      const share = fleet.shareOf(node);
      const renewDue = share !== null && !standingInForce(node) && node.expiresAt - clock <= RENEW_BEFORE_MS;
      const mayGrow = clock - node.lastRenewal >= (node.waiting ? RETRY_WHILE_WAITING_MS : RENEW_AT_MOST_EVERY_MS);
      if (share === null || renewDue || (!fleet.fits(node) && mayGrow)) await fleet.renew(node);
      if (!fleet.fits(node)) {
        refused++;
        continue;
      }
      node.open.push(clock + HOLD_MS);
      node.admitted.push(clock);
      if (rng() < sticky) {
        const key = `c${Math.floor(rng() * 2)}`;
        if ((node.sessions.get(key) ?? 0) <= clock) {
          fleet.calls.pins++;
          const pin = fleet.gate.gate.pinSession(sessionSpec(fleet.gate.name, key), "198.51.100.7");
          node.sessions.set(key, pin.expiresAt - EPOCH);
        }
      }
    }
    return {
      snapshots: fleet.calls.snapshots / requests,
      renewals: fleet.calls.renewals / requests,
      pins: fleet.calls.pins / requests,
      alarms: fleet.gate.alarms() / requests,
      publishes: fleet.gate.publishes() / requests,
      indexCalls: fleet.gate.indexCalls() / requests,
      rowsWritten: fleet.gate.rowsWritten() / requests,
      rowsRead: fleet.gate.rowsRead() / requests,
      cpuMs: fleet.gate.cpuMs() / requests,
      refused: refused / requests,
    };
  });
}

export interface HotSubuserResult {
  connectionsPerSecond: number;
  nodes: number;
  seconds: number;
  limits: { concurrent: number; rps: number };
  gateCallsPerSecond: number;
  gateShareOfBudget: number;
  overAdmitted: number;
  refused: number;
  /** Refusals while capacity sat idle elsewhere, after the first second (every node starts with no share). */
  refusedWhileIdle: number;
  requests: number;
  /** Requests after the first second. */
  warmRequests: number;
}

/**
 * One sub-user at `connectionsPerSecond` new connections (one request each, `holdMs` open) across `nodes` nodes
 * (slots 0…nodes−1) whose shares of the traffic shift every 10 s, for `seconds`. Nodes start on their standing
 * shares; the first renewal ends them. Each node renews its shares when its demand passes them (at most every
 * 250 ms), at once when the gate cuts it or ends standing shares it was using, and once more at once when a renewal
 * lowered its share (confirming it). Counted: the gate's calls, every instant the nodes' open connections or any
 * rolling second's requests pass a limit (over-admission), and refusals made while capacity sat idle elsewhere.
 */
export async function simulateHotSubuser(options: {
  connectionsPerSecond: number;
  nodes: number;
  seconds: number;
  holdMs: number;
  limits: { concurrent: number; rps: number };
}): Promise<HotSubuserResult> {
  const { connectionsPerSecond, seconds, holdMs, limits } = options;
  return withClock(async (setNow) => {
    const rng = random(0xacce55);
    const fleet = simFleet(options.nodes, limits, holdMs, setNow);
    for (const node of fleet.nodes) fleet.meet(node);
    const globalAdmitted: number[] = [];
    let overAdmitted = 0;
    let refused = 0;
    let refusedWhileIdle = 0;
    let requests = 0;
    let warmRequests = 0;
    const end = seconds * 1000;
    const meanGap = 1000 / connectionsPerSecond;
    let nextShift = 10_000;
    let weights = fleet.nodes.map(() => rng());
    // A node whose demand fell to under half its share gives the rest back (at most once a second).
    const outgrown = (node: SimNode, at: number) =>
      at < node.expiresAt &&
      !standingInForce(node) &&
      node.lease.rps > 2 * (Math.ceil(node.attempted.length * DEMAND_HEADROOM) + DEMAND_FLOOR);
    let clock = 0;
    while (clock < end) {
      clock += -Math.log(1 - rng()) * meanGap;
      await fleet.advance(clock);
      if (clock >= nextShift) {
        weights = fleet.nodes.map(() => rng() ** 2);
        nextShift += 10_000;
      }
      let globalOpen = 0;
      for (const node of fleet.nodes) {
        fleet.trim(node);
        globalOpen += node.open.length;
        const givesBack = clock - node.lastRenewal >= GIVE_BACK_EVERY_MS && outgrown(node, clock);
        if (node.cutPending || givesBack) await fleet.renew(node);
      }
      while (globalAdmitted.length > 0 && (globalAdmitted[0] as number) <= clock - 1000) globalAdmitted.shift();
      const node = pick(fleet.nodes, weights, rng);
      requests++;
      if (clock >= WARM_UP_MS) warmRequests++;
      node.attempted.push(clock);
      const every = node.waiting ? RETRY_WHILE_WAITING_MS : RENEW_AT_MOST_EVERY_MS;
      if (!fleet.fits(node) && clock - node.lastRenewal >= every) await fleet.renew(node);
      if (fleet.fits(node)) {
        node.open.push(clock + holdMs);
        node.admitted.push(clock);
        globalAdmitted.push(clock);
        if (globalOpen + 1 > limits.concurrent || globalAdmitted.length > limits.rps) overAdmitted++;
      } else {
        refused++;
        if (clock >= WARM_UP_MS && globalOpen < limits.concurrent && globalAdmitted.length < limits.rps) {
          refusedWhileIdle++;
        }
      }
    }
    const { snapshots, renewals } = fleet.calls;
    const gateCallsPerSecond = (snapshots + renewals) / seconds;
    return {
      connectionsPerSecond,
      nodes: options.nodes,
      seconds,
      limits,
      gateCallsPerSecond,
      gateShareOfBudget: gateCallsPerSecond / 1_000,
      overAdmitted,
      refused,
      refusedWhileIdle,
      requests,
      warmRequests,
    };
  });
}

function pick(nodes: SimNode[], weights: number[], rng: () => number): SimNode {
  let total = 0;
  for (const weight of weights) total += weight;
  let u = rng() * total;
  for (let i = 0; i < nodes.length; i++) {
    u -= weights[i] as number;
    if (u <= 0) return nodes[i] as SimNode;
  }
  return nodes[nodes.length - 1] as SimNode;
}

/** Where simulated time starts: simulations count milliseconds from here. */
const EPOCH = Date.UTC(2026, 10, 24, 12, 0, 0);

/** Runs `simulate` with `Date.now` on a simulated clock (milliseconds from `EPOCH`) that it moves. */
async function withClock<T>(simulate: (setNow: (elapsed: number) => void) => Promise<T>): Promise<T> {
  const realNow = Date.now;
  let now = EPOCH;
  Date.now = () => Math.floor(now);
  try {
    return await simulate((elapsed) => {
      now = EPOCH + elapsed;
    });
  } finally {
    Date.now = realNow;
  }
}

function sessionSpec(name: string, sessionId: string): SessionSpec {
  return {
    key: `user_${name}-type-res-region-us-session-${sessionId}`,
    product: "residential",
    sessionId,
    region: "us",
    state: null,
    city: null,
    asn: null,
    minutes: SESSION_MINUTES,
  };
}

/** A push as the hub sends it to the nodes. */
interface Push {
  type: string;
  subuser?: { version: number; standing: string[] };
}

/**
 * The real `SubuserGate` on `node:sqlite`, configured for one sub-user: its pushes go to `onPush` (with the nodes
 * named, null: all), its alarms run when `runAlarmsUntil` passes them, and the sessions it tells the account's
 * session index go to a real account store (`AccountTraffic`, on `node:sqlite` too). Counted: alarms, publishes,
 * session-index calls, rows written and read by both, and the CPU of every call to either.
 */
function realGate(
  limits: { concurrent: number; rps: number },
  slots: number,
  onPush: (message: Push, nodes: string[] | null) => void,
) {
  const sql = new NodeSqlStorage();
  let publishes = 0;
  let alarms = 0;
  let alarmAt: number | null = null;
  const hub = {
    publish: async (text: string, nodes?: string[]) => {
      publishes++;
      onPush(JSON.parse(text) as Push, nodes ?? null);
      // Every node is connected: each reads it at once, or stops within the grace.
      return { sent: nodes?.length ?? 0, standingEndsBy: nodes ? 0 : Date.now() + STANDING_GRACE_MS };
    },
  };
  const storeSql = new NodeSqlStorage();
  const store = new AccountTraffic(storeSql as unknown as AreaStorage);
  storeSql.countWrites();
  let indexCalls = 0;
  let cpuMs = 0;
  const sessionIndex = {
    upsertSessions: async (snapshots: SessionSnapshot[]) => {
      indexCalls++;
      const begin = performance.now();
      store.upsertSessions(snapshots);
      cpuMs += performance.now() - begin;
    },
  };
  const storage = Object.assign(sql, {
    setAlarm: (at: number) => {
      alarmAt = at;
    },
    getAlarm: async () => alarmAt,
  });
  const ctx = { storage, waitUntil: () => {} };
  const namespace = (object: unknown) => ({ idFromName: () => ({}), get: () => object });
  const env = { GATEWAY_HUB: namespace(hub), TRAFFIC_STORE: namespace(sessionIndex), GATEWAY_SLOTS: String(slots) };
  const gate = timedCalls(new SubuserGate(ctx as never, env as never), (ms) => {
    cpuMs += ms;
  });
  const name = "shot";
  const config: GateConfig = {
    subuserId: "sub_hot",
    accountId: "usr_hot",
    name,
    products: ["residential"],
    status: "active",
    passwordHash: "0".repeat(64),
    previousPasswordHash: null,
    previousPasswordUntil: null,
    limits: { residential: limits },
    whitelist: [],
    pools: { residential: { purchasedBytes: 1e15, usedBytes: 0 } },
    trafficLimitBytes: null,
    monthUsage: null,
  };
  gate.configure(config);
  sql.countWrites();
  cpuMs = 0;
  return {
    gate,
    name,
    /** Runs each alarm due by `until` at its time (`setClock` moves the simulation's clock), and leaves it at `until`. */
    async runAlarmsUntil(until: number, setClock: (at: number) => void) {
      while (alarmAt !== null && alarmAt - EPOCH <= until) {
        setClock(alarmAt - EPOCH);
        alarmAt = null;
        alarms++;
        await gate.alarm();
      }
      setClock(until);
    },
    alarms: () => alarms,
    publishes: () => publishes,
    indexCalls: () => indexCalls,
    rowsWritten: () => sql.rowsWritten().total + storeSql.rowsWritten().total,
    rowsRead: () => sql.rowsRead() + storeSql.rowsRead(),
    cpuMs: () => cpuMs,
  };
}
