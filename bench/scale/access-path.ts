import type { GateConfig } from "../../src/durable-objects/subuser-gate/contract";
import { QUIET_LEASE_MS } from "../../src/durable-objects/subuser-gate/node-shares";
import { SubuserGate } from "../../src/durable-objects/subuser-gate/subuser-gate";
import { accountShares, type Mix, random, SUBUSERS } from "./fleet";
import { NodeSqlStorage } from "./node-sql";

/**
 * The access path as built (docs/gateway.md, "Deciding at the node"): what deciding every request at the gateway
 * nodes costs the API, and how one busy sub-user's gate holds its limits across many nodes. The gate is the real
 * `SubuserGate` on `node:sqlite` (as the metering simulation runs the real store); the nodes follow the contract.
 */

const PRICES = {
  workerRequestsPerMillion: 0.3,
  objectRequestsPerMillion: 0.15,
  objectGbSecondsPerMillion: 12.5,
  objectMemoryGb: 0.128,
  objectRowsWrittenPerMillion: 1.0,
};
/** A gate call's wall-clock while active (stated, not measured here): duration is billed on wall-clock. */
const GATE_CALL_WALL_MS = 2;
/** A node batches its calls: at most one request to the API per window. */
const NODE_BATCH_WINDOW_MS = 50;
/** A node keeps a sub-user's snapshot this long after its last use (pushes keep it current meanwhile). */
const SNAPSHOT_KEPT_S = 86_400;
/** Changes nodes must hear of (PATCHes, rotations, pool and cap flips): one per sub-user per day, stated. */
const CHANGES_PER_SUBUSER_PER_DAY = 1;
/** New connections a gateway node serves per second (sizes the fleet). */
const CONNECTIONS_PER_NODE = 3_300;
const STICKY_SHARE = 0.2;
/** Every node starts with no share: the first second is the fleet's cold start, reported apart. */
const WARM_UP_MS = 1_000;
/** A node asks for its last second's demand with this headroom, plus a floor, and renews at most this often. */
const DEMAND_HEADROOM = 1.2;
const DEMAND_FLOOR = 5;
const RENEW_AT_MOST_EVERY_MS = 250;
/** A node gives back a share its demand fell far below at most this often. */
const GIVE_BACK_EVERY_MS = 1000;
/** A node that waits asks again this soon: the nodes cut for it renew at once. */
const RETRY_WHILE_WAITING_MS = 50;
const SESSION_SECONDS = 1_800;

export interface AccessPathCost {
  nodes: number;
  fanOutPerChange: number;
  perSecond: { workerRequests: number; gateCalls: number; hubCalls: number; rowsWritten: number };
  cost: Array<{ line: string; usdPerBillion: number }>;
}

/**
 * The access path's bill per billion gateway requests when every request is a new connection: per (node,
 * sub-user), a lease starts at a request that finds none live and lasts a quiet minute (`QUIET_LEASE_MS`), so its
 * calls are a renewal process at rate p / (1 + p·60 s) for p requests/s at that node; a snapshot is fetched when
 * the node meets the sub-user after a day apart; a sticky session is asked once per node that serves it.
 */
export function accessPathCost(mix: Mix, requestsPerMinute: number, accounts: number): AccessPathCost {
  const perSecond = requestsPerMinute / 60;
  const nodes = Math.max(3, Math.ceil(perSecond / CONNECTIONS_PER_NODE));
  const shares = accountShares(mix);
  const quietS = QUIET_LEASE_MS / 1000;
  let leaseCalls = 0;
  let snapshotCalls = 0;
  let sessionCalls = 0;
  let activeGates = 0;
  for (let a = 0; a < accounts; a++) {
    const subuserRate = ((shares[a] as number) * perSecond) / SUBUSERS;
    const p = subuserRate / nodes;
    const pairLeases = p / (1 + p * quietS);
    leaseCalls += SUBUSERS * nodes * pairLeases;
    snapshotCalls += SUBUSERS * nodes * p * Math.exp(-p * SNAPSHOT_KEPT_S);
    const sessionsPerSecond = Math.min(STICKY_SHARE * subuserRate, 2 / SESSION_SECONDS);
    sessionCalls +=
      SUBUSERS * sessionsPerSecond * Math.min(nodes, 1 + (STICKY_SHARE * subuserRate * SESSION_SECONDS) / 2);
    activeGates += SUBUSERS * Math.min(1 / 60, nodes * pairLeases);
  }
  const gateCalls = leaseCalls + snapshotCalls + sessionCalls;
  const callsPerNode = gateCalls / nodes;
  const workerRequests = nodes * Math.min(1000 / NODE_BATCH_WINDOW_MS, callsPerNode);
  const changesPerSecond = (accounts * SUBUSERS * CHANGES_PER_SUBUSER_PER_DAY) / 86_400;
  // Pings every 30 s are answered without waking the hub; counted as messages (20 to a request) all the same.
  const hubCalls = changesPerSecond + nodes / 30 / 20;
  // A gate notes a minute ahead that its grants may be live: one row a minute while nodes lease from it.
  const rowsWritten = activeGates;
  const usd = {
    "Worker requests": (workerRequests * PRICES.workerRequestsPerMillion) / 1e6,
    "DO requests": ((gateCalls + hubCalls) * PRICES.objectRequestsPerMillion) / 1e6,
    "DO duration":
      (((gateCalls + hubCalls) * GATE_CALL_WALL_MS) / 1000) *
      PRICES.objectMemoryGb *
      (PRICES.objectGbSecondsPerMillion / 1e6),
    "DO rows written": (rowsWritten * PRICES.objectRowsWrittenPerMillion) / 1e6,
  };
  return {
    nodes,
    fanOutPerChange: nodes,
    perSecond: { workerRequests, gateCalls, hubCalls, rowsWritten },
    cost: Object.entries(usd).map(([line, perSecondUsd]) => ({
      line,
      usdPerBillion: (perSecondUsd / perSecond) * 1e9,
    })),
  };
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

interface SimNode {
  name: string;
  share: { concurrent: number; rps: number };
  expiresAt: number;
  open: number[];
  admitted: number[];
  attempted: number[];
  lastRenewal: number;
  cutPending: boolean;
  /** Its last renewal granted less than it wanted: the nodes cut meanwhile may have freed some. */
  waiting: boolean;
}

/**
 * One sub-user at `connectionsPerSecond` new connections (one request each, `holdMs` open) across `nodes` nodes
 * whose shares of the traffic shift every 10 s, for `seconds`. Each node renews its shares (one gate call, both
 * limits) when its demand passes them (at most every 250 ms), at once when the gate cuts it, and once more at once
 * when a renewal lowered its share (confirming it). Counted: the
 * gate's calls, every instant the nodes' open connections or any rolling second's requests pass a limit
 * (over-admission), and refusals made while the capacity sat idle elsewhere.
 */
export function simulateHotSubuser(options: {
  connectionsPerSecond: number;
  nodes: number;
  seconds: number;
  holdMs: number;
  limits: { concurrent: number; rps: number };
}): HotSubuserResult {
  const { connectionsPerSecond, seconds, holdMs, limits } = options;
  const realNow = Date.now;
  let clock = Date.UTC(2026, 10, 24, 12, 0, 0);
  Date.now = () => clock;
  try {
    const { gate, cuts } = realGate(limits);
    const rng = random(0xacce55);
    const nodes: SimNode[] = Array.from({ length: options.nodes }, (_, i) => ({
      name: `node-${i + 1}`,
      share: { concurrent: 0, rps: 0 },
      expiresAt: 0,
      open: [],
      admitted: [],
      attempted: [],
      lastRenewal: -Infinity,
      cutPending: false,
      waiting: false,
    }));
    let weights = nodes.map(() => rng());
    const globalAdmitted: number[] = [];
    let globalOpen = 0;
    let gateCalls = 0;
    let overAdmitted = 0;
    let refused = 0;
    let refusedWhileIdle = 0;
    let requests = 0;
    let warmRequests = 0;
    const start = clock;
    const end = start + seconds * 1000;
    const renew = (node: SimNode): void => {
      gateCalls++;
      node.lastRenewal = clock;
      node.cutPending = false;
      const second = clock - 1000;
      // Demand: the last second's attempts, or the last quarter second's four times over when it is rising.
      const recentAttempts = Math.max(
        node.attempted.filter((t) => t > second).length,
        4 * node.attempted.filter((t) => t > clock - 250).length,
      );
      const want = {
        concurrent: Math.ceil(recentAttempts * (holdMs / 1000) * DEMAND_HEADROOM) + DEMAND_FLOOR,
        rps: Math.ceil(recentAttempts * DEMAND_HEADROOM) + DEMAND_FLOOR,
      };
      const grant = gate.renewShares({
        node: node.name,
        product: "residential",
        held: clock < node.expiresAt ? node.share : { concurrent: 0, rps: 0 },
        open: node.open.length,
        recent: node.admitted.filter((t) => t > second).length,
        want,
      });
      if (!grant) throw new Error("the gate does not know its sub-user");
      const held = clock < node.expiresAt ? node.share : { concurrent: 0, rps: 0 };
      node.waiting = (grant.concurrent ?? 0) < want.concurrent || (grant.rps ?? 0) < want.rps;
      node.share = { concurrent: grant.concurrent ?? 0, rps: grant.rps ?? 0 };
      node.expiresAt = grant.expiresAt;
      // A node whose share was lowered confirms at once, so the gate stops counting the share it gave up.
      const lowered = node.share.concurrent < held.concurrent || node.share.rps < held.rps;
      for (const name of cuts.splice(0)) {
        const cut = nodes.find((candidate) => candidate.name === name);
        if (cut) cut.cutPending = true;
      }
      if (lowered) renew(node);
    };
    // A node whose demand fell to under half its share gives the rest back (at most once a second).
    const outgrown = (node: SimNode) =>
      clock < node.expiresAt &&
      node.share.rps > 2 * (Math.ceil(node.attempted.length * DEMAND_HEADROOM) + DEMAND_FLOOR);
    const meanGap = 1000 / connectionsPerSecond;
    let nextShift = start + 10_000;
    while (clock < end) {
      clock += -Math.log(1 - rng()) * meanGap;
      if (clock >= nextShift) {
        weights = nodes.map(() => rng() ** 2);
        nextShift += 10_000;
      }
      for (const node of nodes) {
        while (node.open.length > 0 && (node.open[0] as number) <= clock) {
          node.open.shift();
          globalOpen--;
        }
        while (node.admitted.length > 0 && (node.admitted[0] as number) <= clock - 1000) node.admitted.shift();
        while (node.attempted.length > 0 && (node.attempted[0] as number) <= clock - 1000) node.attempted.shift();
        if (node.cutPending || (clock - node.lastRenewal >= GIVE_BACK_EVERY_MS && outgrown(node))) renew(node);
      }
      while (globalAdmitted.length > 0 && (globalAdmitted[0] as number) <= clock - 1000) globalAdmitted.shift();
      const node = pick(nodes, weights, rng);
      requests++;
      if (clock - start >= WARM_UP_MS) warmRequests++;
      node.attempted.push(clock);
      const live = clock < node.expiresAt;
      const fits = (share: SimNode["share"]) => node.open.length < share.concurrent && node.admitted.length < share.rps;
      const every = node.waiting ? RETRY_WHILE_WAITING_MS : RENEW_AT_MOST_EVERY_MS;
      if (!(live && fits(node.share)) && clock - node.lastRenewal >= every) renew(node);
      if (clock < node.expiresAt && fits(node.share)) {
        node.open.push(clock + holdMs);
        node.admitted.push(clock);
        globalAdmitted.push(clock);
        globalOpen++;
        if (globalOpen > limits.concurrent || globalAdmitted.length > limits.rps) overAdmitted++;
      } else {
        refused++;
        const warm = clock - start >= WARM_UP_MS;
        if (warm && globalOpen < limits.concurrent && globalAdmitted.length < limits.rps) refusedWhileIdle++;
      }
    }
    const gateCallsPerSecond = gateCalls / seconds;
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
  } finally {
    Date.now = realNow;
  }
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

/** The real `SubuserGate` on `node:sqlite`, configured for one sub-user; the nodes its pushes cut. */
function realGate(limits: { concurrent: number; rps: number }) {
  const sql = new NodeSqlStorage();
  const cuts: string[] = [];
  const hub = {
    publish: async (text: string, nodes?: string[]) => {
      if (nodes && JSON.parse(text).type === "lease_cut") cuts.push(...nodes);
      return nodes?.length ?? 0;
    },
  };
  const storage = Object.assign(sql, { setAlarm: () => {}, getAlarm: async () => null });
  const ctx = { storage, waitUntil: () => {} };
  const env = { GATEWAY_HUB: { idFromName: () => ({}), get: () => hub } };
  const gate = new SubuserGate(ctx as never, env as never);
  const config: GateConfig = {
    subuserId: "sub_hot",
    accountId: "usr_hot",
    name: "shot",
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
  return { gate, cuts };
}
