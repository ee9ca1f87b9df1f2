import { performance } from "node:perf_hooks";
import type { ApiClient } from "../../gateway/api-client.ts";
import type { Clock, TimerHandle } from "../../gateway/clock.ts";
import { sha256Hex } from "../../gateway/credentials.ts";
import { type NodeDecider, nodeDecider } from "../../gateway/node-decider.ts";
import type { GatewayConnection } from "../../gateway/proxy-server.ts";
import type { GatewayDecision, GatewayPush } from "../../gateway/wire.ts";
import type { AreaStorage } from "../../src/durable-objects/shared/storage-versions";
import { type GateConfig, snapshotOnWire, targetRulesOnWire } from "../../src/durable-objects/subuser-gate/contract";
import { SubuserGate } from "../../src/durable-objects/subuser-gate/subuser-gate";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { SessionSnapshot } from "../../src/durable-objects/traffic-store/contract";
import { DAY, toIso } from "../../src/platform/clock";
import { SlidingLog } from "../../src/platform/sliding-log";
import { STANDING_GRACE_MS } from "../../src/platform/standing-shares";
import { MAX_TARGET_DOMAINS, MAX_TARGET_IP_RANGES, type TargetRules } from "../../src/platform/target-rules";
import { accountShares, type Mix, random, SUBUSERS } from "./fleet";
import { NodeSqlStorage } from "./node-sql";
import { objectGbSeconds, PRICES } from "./platform";
import { type PartyClock, SimClock } from "./sim-clock";
import { timedCalls } from "./timed-calls";

/**
 * The access path as built (docs/gateway.md, "Deciding at the node"): what deciding every request at the gateway
 * nodes costs the API, and how one busy sub-user's gate holds its limits across many nodes. Each node is the shipped
 * decider (`nodeDecider`, gateway/node-decider.ts, with its `LeaseManager`, snapshot cache and sticky sessions at
 * the timings the gateway runs them with), on its own clock of one simulated timeline (`SimClock`); a request is a
 * client connection's `decide`, as the proxy asks it, and the connection's `close`. The gate is the real
 * `SubuserGate` on `node:sqlite` (as the metering simulation runs the real store), its alarms timers on the same
 * timeline. A node's API calls reach the gate in process as the node routes call it, and the gate's pushes reach
 * each node's change-feed handler as the hub sends them. Calls take no simulated time.
 */

/** A node batches its calls: at most one request to the API per window. */
const NODE_BATCH_WINDOW_MS = 50;
/** Changes nodes must hear of (PATCHes, rotations, pool and cap flips): one per sub-user per day, stated. */
const CHANGES_PER_SUBUSER_PER_DAY = 1;
/**
 * A reseller's controls on every fleet sub-user in the simulation, at their largest: full target rules, an expiry and
 * day and lifetime caps, so every snapshot fetched and pushed carries them (their bytes are in the measured lines).
 * The bill's line for the rules at rest and their edits' pushes prices a fleet where one sub-user in ten has rules
 * at that size and each is edited once a month (a reseller sets them when selling the sub-user), stated; the bound
 * (every sub-user ruled and edited daily) is reported beside it.
 */
const FLEET_RULES: TargetRules = {
  mode: "deny",
  domains: Array.from({ length: MAX_TARGET_DOMAINS }, (_, i) => `customer-site-${i}.example`),
  ipRanges: Array.from({ length: MAX_TARGET_IP_RANGES }, (_, i) => `10.${i}.0.0/16`),
};
const RULED = { share: 0.1, editsPerDay: 1 / 30 };
const RULED_BOUND = { share: 1, editsPerDay: 1 };
/** The bill's line for them. */
export const TARGET_RULES_LINE = "Target rules (stored, edited)";
/** Copies of a sub-user's rules at rest: D1's row, and the gate's configuration and node view. */
const RULE_COPIES = { d1: 1, objects: 2 };
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
/** Sub-user request rates simulated on the real gate (requests/s), two to a decade; others are interpolated. */
const RATE_CLASSES = Array.from({ length: 17 }, (_, i) => 10 ** (-6 + i / 2));
/**
 * A node's periodic work rests this long after its last request, connection end or timer (`SimClock`): its lease
 * entries are idle 2 s after their last request and connection (they are renewed only while in use), so past that it
 * only forgets. Checked: a node's catch-up tick that calls the API fails the simulation.
 */
const QUIET_MS = 10_000;
/** What clients present: the gate's sub-user, its password, from one address. */
const PASSWORD = "secret";
const CLIENT_IP = "203.0.113.9";
/** Where simulated time starts: simulations count from here. */
const EPOCH = Date.UTC(2026, 10, 24, 12, 0, 0);

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
  /** The target rules' line were every sub-user ruled at the bound and edited daily (per billion). */
  targetRulesBoundUsdPerBillion: number;
  /** Each line, and the part of it that sticky-session pins cause. */
  cost: Array<{ line: string; usdPerBillion: number; sessionsUsdPerBillion: number }>;
  /** Per-request figures of each simulated rate class (requests/s per sub-user). */
  classes: Array<{ rate: number } & PerRequest>;
}

/**
 * The access path's bill per billion gateway requests when every request is a new connection. Each rate class is
 * one sub-user on the real gate, with and without its sticky sessions: requests (Poisson, open 2 s) land on random
 * nodes of the fleet, each the shipped node decider. Every account's sub-users are priced at their rate's figures (log-interpolated between
 * classes), weighted by the account's requests.
 */
export async function accessPathCost(mix: Mix, requestsPerMinute: number, accounts: number): Promise<AccessPathCost> {
  const perSecond = requestsPerMinute / 60;
  const nodes = Math.max(3, Math.ceil(perSecond / CONNECTIONS_PER_NODE));
  const classes: Array<{ rate: number } & PerRequest> = [];
  const noSticky: Array<{ rate: number } & PerRequest> = [];
  for (const rate of RATE_CLASSES) {
    classes.push({ rate, ...(await subuserFigures(rate, nodes, true)) });
    noSticky.push({ rate, ...(await subuserFigures(rate, nodes, false)) });
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
    targetRulesBoundUsdPerBillion: (targetRulesUsdPerSecond(accounts, RULED_BOUND) / perSecond) * 1e9,
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
  const rules = targetRulesUsdPerSecond(accounts, RULED);
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
      [TARGET_RULES_LINE]: perBillion(rules),
    },
  };
}

/**
 * What sub-users' target rules add beyond the snapshots that carry them (measured in the gate calls above): their
 * bytes at rest in D1 and in each gate, and each edit's push: the gate's configuration and the hub's publish (two
 * object calls, two object rows). Nodes match them with no call. The edit's own PATCH is the management API's, as
 * any PATCH, and not counted here.
 */
function targetRulesUsdPerSecond(accounts: number, { share, editsPerDay }: { share: number; editsPerDay: number }) {
  const ruled = accounts * SUBUSERS * share;
  const bytes = JSON.stringify(targetRulesOnWire(FLEET_RULES)).length;
  const month = 30 * DAY;
  const storageUsdPerSecond =
    ((ruled * bytes) / 1e9) *
    ((RULE_COPIES.d1 * PRICES.d1StorageGbMonth + RULE_COPIES.objects * PRICES.objectStorageGbMonth) / (month / 1000));
  const edits = (ruled * editsPerDay) / (DAY / 1000);
  const editUsd =
    (2 * PRICES.objectRequestsPerMillion + 2 * PRICES.objectRowsWrittenPerMillion) / 1e6 +
    (objectGbSeconds(2, 0) * PRICES.objectGbSecondsPerMillion) / 1e6;
  return storageUsdPerSecond + edits * editUsd;
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

/** Each rate class's figures, simulated once per fleet size: every mix prices its sub-users from the same classes. */
const classFigures = new Map<string, Promise<PerRequest>>();
function subuserFigures(rate: number, count: number, sessions: boolean): Promise<PerRequest> {
  const key = `${rate} ${count} ${sessions}`;
  let figures = classFigures.get(key);
  if (!figures) {
    figures = simulateSubuser(rate, count, sessions);
    classFigures.set(key, figures);
  }
  return figures;
}

/** A gateway node: the shipped decider on its own clock of the timeline. */
interface SimNode {
  name: string;
  clock: Clock;
  decider: NodeDecider;
}

/** The gate calls the nodes made, by the cost model's kinds. */
interface GateCalls {
  snapshots: number;
  renewals: number;
  pins: number;
}

/**
 * `count` shipped node deciders (slots 0…count−1 of `slotsFor(count)`) in front of one real gate, on `clock`. Each
 * node's change feed opens at once with its slot (`hello`) and reads every push as it is sent, so its slot is
 * vouched for throughout. `finish` stops the nodes and throws if a node logged an error (the API never fails here)
 * or a quiet node's catch-up called the API (`QUIET_MS` too short).
 */
function simFleet(count: number, limits: { concurrent: number; rps: number }, clock: SimClock) {
  const slots = slotsFor(count);
  const feeds = new Map<string, { clock: PartyClock; onMessage: (push: GatewayPush) => void }>();
  const gate = realGate(limits, slots, clock, (text, named) => {
    // The hub writes it to each node named (null: every connected node), which reads it as its change feed does.
    for (const [node, feed] of feeds) {
      if (named === null || named.includes(node)) feed.clock.deliver(() => feed.onMessage(JSON.parse(text)));
    }
  });
  const calls: GateCalls = { snapshots: 0, renewals: 0, pins: 0 };
  const problems: string[] = [];
  const log = { error: (message: string) => problems.push(message) };
  const nodes = Array.from({ length: count }, (_, slot): SimNode => {
    const name = `node-${slot}`;
    const nodeClock = clock.party();
    const decider = nodeDecider({
      api: nodeApi(name, gate, calls, clock, problems),
      clock: nodeClock,
      log,
      feed: ({ onMessage, onState }) => {
        nodeClock.setTimeout(() => {
          feeds.set(name, { clock: nodeClock, onMessage });
          onState(true);
          onMessage({ type: "hello", slot, slots, standing_after_ms: 0 });
        }, 0);
        return { vouched: () => true, close: () => feeds.delete(name) };
      },
    });
    return { name, clock: nodeClock, decider };
  });
  return {
    nodes,
    gate,
    calls,
    /** From here on, counts start afresh. */
    reset() {
      calls.snapshots = 0;
      calls.renewals = 0;
      calls.pins = 0;
      gate.reset();
    },
    finish() {
      for (const node of nodes) node.decider.close();
      if (problems.length > 0)
        throw new Error(`the access-path simulation went wrong: ${problems.slice(0, 3).join("; ")}`);
    },
  };
}

/**
 * One node's calls of the API (`ApiClient`), answered by the gate in process as the node routes answer them:
 * `/subusers` by its `snapshot()` (src/internal/gateway/get-node-snapshots.ts), `/leases` by each renewal's
 * `renewShares` with the node's slot, which the hub vouches it holds (renew-node-leases.ts). Each is a gate call of
 * the cost model's kind. Sticky sessions are decided at the node: no call.
 */
function nodeApi(
  node: string,
  gate: RealGate,
  calls: GateCalls,
  clock: SimClock,
  problems: string[],
): Pick<ApiClient, "subusers" | "leases" | "changes" | "authorize" | "release"> {
  const called = (path: string) => {
    if (clock.catchingUp) problems.push(`${node}: a quiet node's periodic work called ${path}`);
  };
  return {
    async subusers(names) {
      called("/subusers");
      const found = names.map((name) => {
        if (name !== gate.name) return null;
        calls.snapshots++;
        return gate.gate.snapshot();
      });
      return {
        subusers: found.flatMap((snapshot) => (snapshot ? [snapshotOnWire(snapshot)] : [])),
        unknown: names.filter((_, index) => !found[index]),
      };
    },
    async leases(leases, slot = null) {
      called("/leases");
      const grants = await Promise.all(
        leases.map(({ name, product, held, open, recent, want }) => {
          if (name !== gate.name) return null;
          calls.renewals++;
          return gate.gate.renewShares({ node, slot, product, held, open, recent: recent ?? held.rps, want });
        }),
      );
      return {
        leases: leases.map(({ name, product }, index) => {
          const grant = grants[index] ?? null;
          return {
            name,
            product,
            known: grant !== null,
            concurrent: grant ? grant.concurrent : 0,
            rps: grant ? grant.rps : 0,
            expires_at: toIso(grant ? grant.expiresAt : Date.now()),
            version: grant?.version ?? 0,
          };
        }),
      };
    },
    changes: () => ({ url: "", headers: { Authorization: "" } }),
    authorize: () => Promise.reject(new Error("ISP is not simulated")),
    release: () => Promise.reject(new Error("ISP is not simulated")),
  };
}

/** A client's username for the gate's sub-user, on one of its sticky sessions or none. */
function usernameOf(name: string, session: string | null): string {
  const sticky = session === null ? "" : `-session-${session}-sesstime-${SESSION_MINUTES}`;
  return `user_${name}-type-res-region-us${sticky}`;
}

/** A client's request on a new connection to `node`, as the proxy has it decided; `decided` gets the decision. */
function connect(
  node: SimNode,
  username: string,
  decided: (decision: GatewayDecision, connection: GatewayConnection) => void,
): void {
  const connection = node.decider.connection(CLIENT_IP);
  void connection
    .decide({ username, password: PASSWORD, product: "residential" })
    .then((decision) => decided(decision, connection));
}

/**
 * One sub-user at `rate` requests/s (Poisson, each a new connection open 2 s; with `sessions`, a fifth of them on one
 * of its two sticky sessions) over `count` nodes holding slots 0…count−1, on the real gate: at least 400 requests
 * and 10 minutes. Per request: the gate calls, alarms, pushes and rows written.
 */
async function simulateSubuser(rate: number, count: number, sessions: boolean): Promise<PerRequest> {
  const rng = random((Math.imul(Math.round(Math.log10(rate) * 1000), 0x9e3779b1) ^ Math.imul(count, 0x85ebca6b)) >>> 0);
  // As in a fleet that has run for long: each node last met the sub-user (fetched its snapshot) as its requests say.
  const metAt = Array.from({ length: count }, () => EPOCH + (Math.log(1 - rng()) * 1000 * count) / rate);
  return withSimClock(Math.min(EPOCH, ...metAt) - 1, async (clock) => {
    const fleet = simFleet(count, FLEET_LIMITS, clock);
    fleet.nodes.forEach((node, index) => {
      const at = metAt[index] as number;
      node.clock.setTimeout(() => void node.decider.snapshots.get(fleet.gate.name), at - clock.now());
    });
    await clock.runUntil(EPOCH);
    fleet.reset();
    const requests = Math.max(400, Math.ceil(rate * 600));
    let at = EPOCH;
    let refused = 0;
    for (let i = 0; i < requests; i++) {
      at += -Math.log(1 - rng()) * (1000 / rate);
      const node = fleet.nodes[Math.floor(rng() * count)] as SimNode;
      // The same draws with sessions or without: the same requests reach the same nodes, the difference is the pins'.
      const session = rng() < STICKY_SHARE ? `c${Math.floor(rng() * 2)}` : null;
      const username = usernameOf(fleet.gate.name, sessions ? session : null);
      node.clock.setTimeout(
        () =>
          connect(node, username, (decision, connection) => {
            if (decision.allow) node.clock.setTimeout(() => connection.close(), HOLD_MS);
            else refused++;
          }),
        at - clock.now(),
      );
      await clock.runUntil(at);
    }
    fleet.finish();
    const { gate, calls } = fleet;
    return {
      snapshots: calls.snapshots / requests,
      renewals: calls.renewals / requests,
      pins: calls.pins / requests,
      alarms: gate.alarms() / requests,
      publishes: gate.publishes() / requests,
      indexCalls: gate.indexCalls() / requests,
      rowsWritten: gate.rowsWritten() / requests,
      rowsRead: gate.rowsRead() / requests,
      cpuMs: gate.cpuMs() / requests,
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
  /** Refusals by error code (`rps-limit`, `concurrent-limit`; `auth-unavailable`: no share could be had). */
  refusedBy: Record<string, number>;
  /** Refusals while capacity sat idle elsewhere, after the first second (every node starts with no share). */
  refusedWhileIdle: number;
  requests: number;
  /** Requests after the first second. */
  warmRequests: number;
}

/**
 * One sub-user at `connectionsPerSecond` new connections (one request each, `holdMs` open) across `nodes` shipped
 * node deciders (slots 0…nodes−1) whose shares of the traffic shift every 10 s, for `seconds`. The nodes start on
 * their standing shares; whatever they do from there (asking, growing and renewing leases, renewing when the gate
 * cuts them or ends standing shares) is the shipped `LeaseManager`'s. Counted: the gate's calls, every instant the
 * nodes' open connections or any rolling second's requests pass a limit (over-admission), and refusals made while
 * capacity sat idle elsewhere.
 */
export async function simulateHotSubuser(options: {
  connectionsPerSecond: number;
  nodes: number;
  seconds: number;
  holdMs: number;
  limits: { concurrent: number; rps: number };
}): Promise<HotSubuserResult> {
  const { connectionsPerSecond, seconds, holdMs, limits } = options;
  return withSimClock(EPOCH, async (clock) => {
    const rng = random(0xacce55);
    const fleet = simFleet(options.nodes, limits, clock);
    const username = usernameOf(fleet.gate.name, null);
    const admitted = new SlidingLog(1000);
    let open = 0;
    let overAdmitted = 0;
    let refused = 0;
    const refusedBy: Record<string, number> = {};
    let refusedWhileIdle = 0;
    let requests = 0;
    let warmRequests = 0;
    const end = EPOCH + seconds * 1000;
    const meanGap = 1000 / connectionsPerSecond;
    let nextShift = EPOCH + 10_000;
    let weights = fleet.nodes.map(() => rng());
    let at = EPOCH;
    for (;;) {
      at += -Math.log(1 - rng()) * meanGap;
      if (at >= end) break;
      if (at >= nextShift) {
        weights = fleet.nodes.map(() => rng() ** 2);
        nextShift += 10_000;
      }
      const node = pick(fleet.nodes, weights, rng);
      const warm = at - EPOCH >= WARM_UP_MS;
      requests++;
      if (warm) warmRequests++;
      node.clock.setTimeout(
        () =>
          connect(node, username, (decision, connection) => {
            const now = clock.now();
            if (decision.allow) {
              open++;
              admitted.add(now);
              if (open > limits.concurrent || admitted.count(now) > limits.rps) overAdmitted++;
              node.clock.setTimeout(() => {
                connection.close();
                open--;
              }, holdMs);
              return;
            }
            refused++;
            refusedBy[decision.error_code] = (refusedBy[decision.error_code] ?? 0) + 1;
            if (warm && open < limits.concurrent && admitted.count(now) < limits.rps) refusedWhileIdle++;
          }),
        at - clock.now(),
      );
      await clock.runUntil(at);
    }
    fleet.finish();
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
      refusedBy,
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

/** Runs `simulate` on a simulated timeline from `start` (ms since the epoch), `Date.now` (the gate's time) on it. */
async function withSimClock<T>(start: number, simulate: (clock: SimClock) => Promise<T>): Promise<T> {
  const clock = new SimClock(start, { quietMs: QUIET_MS });
  const realNow = Date.now;
  Date.now = () => Math.floor(clock.now());
  try {
    return await simulate(clock);
  } finally {
    Date.now = realNow;
  }
}

type RealGate = ReturnType<typeof realGate>;

/**
 * The real `SubuserGate` on `node:sqlite`, configured for one sub-user: its pushes go to `publish` (with the nodes
 * named, null: all), its alarms are timers on `clock`, and the sessions it tells the account's session index go to
 * a real account store (`AccountTraffic`, on `node:sqlite` too). Counted: alarms, publishes, session-index calls,
 * rows written and read by both, and the CPU of every call to either.
 */
function realGate(
  limits: { concurrent: number; rps: number },
  slots: number,
  clock: SimClock,
  publish: (text: string, nodes: string[] | null) => void,
) {
  const gateClock = clock.party();
  const sql = new NodeSqlStorage();
  let publishes = 0;
  let alarms = 0;
  let alarmAt: number | null = null;
  let alarmTimer: TimerHandle | null = null;
  const hub = {
    publish: async (text: string, nodes?: string[]) => {
      publishes++;
      publish(text, nodes ?? null);
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
      gateClock.clearTimeout(alarmTimer);
      alarmAt = at;
      alarmTimer = gateClock.setTimeout(() => {
        alarmAt = null;
        alarmTimer = null;
        alarms++;
        void gate.alarm();
      }, at - gateClock.now());
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
    passwordHash: sha256Hex(PASSWORD),
    previousPasswordHash: null,
    previousPasswordUntil: null,
    limits: { residential: limits },
    whitelist: [],
    pools: { residential: { purchasedBytes: 1e15, usedBytes: 0 } },
    trafficLimitBytes: null,
    monthUsage: null,
    dailyLimitBytes: 1e15,
    dayUsage: null,
    lifetimeLimitBytes: 1e18,
    lifetimeUsedBytes: 0,
    expiresAt: EPOCH + 365 * DAY,
    targetRules: FLEET_RULES,
  };
  gate.configure(config);
  sql.countWrites();
  return {
    gate,
    name,
    reset() {
      publishes = 0;
      alarms = 0;
      indexCalls = 0;
      cpuMs = 0;
      sql.resetCounts();
      storeSql.resetCounts();
    },
    alarms: () => alarms,
    publishes: () => publishes,
    indexCalls: () => indexCalls,
    rowsWritten: () => sql.rowsWritten().total + storeSql.rowsWritten().total,
    rowsRead: () => sql.rowsRead() + storeSql.rowsRead(),
    cpuMs: () => cpuMs,
  };
}
