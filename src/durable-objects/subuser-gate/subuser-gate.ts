import { DurableObject } from "cloudflare:workers";
import { MINUTE, now, SECOND, utcMonth } from "../../platform/clock";
import { randomString } from "../../platform/crypto";
import { accessRefusal, passwordAccepted, placeRefusal, type Refusal } from "../../platform/gateway-rules";
import { type WhitelistCheck, whitelistCheck } from "../../platform/ip";
import { SlidingLog } from "../../platform/sliding-log";
import { GatewayHubClient, gatewaySlots } from "../gateway-hub";
import type { GatewayPush } from "../gateway-hub/contract";
import { Alarm } from "../shared/alarm";
import { migrate, type StorageStep } from "../shared/storage-versions";
import { TrafficStoreClient } from "../traffic-store";
import type { SessionSnapshot, SessionUsage } from "../traffic-store/contract";
import type {
  BandwidthProduct,
  DecideInput,
  Decision,
  ExitPin,
  GateConfig,
  GatewayProduct,
  NodeSnapshot,
  PoolFigures,
  SessionPin,
  SessionSpec,
  ShareGrant,
  ShareRenewal,
} from "./contract";
import { snapshotOnWire, TERMINATED_KEPT_MS } from "./contract";
import { NodeShares, QUIET_LEASE_MS } from "./node-shares";
import { SessionBook, type SessionIdentity } from "./session-book";

/** The gate's storage steps (`migrate`; its `SessionBook` has its own): append, never edit. */
const GATE_STORAGE: StorageStep[] = [
  // 1: the tables.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
    `),
  // 2: a lease remembers its sticky session, so that its release pins the exit it used.
  (sql) => sql.exec("ALTER TABLE leases ADD COLUMN session TEXT"),
  // 3: the version of what gateway nodes know of the sub-user, and until when grants to nodes may be live.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS node_view (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, view TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS node_grants (id INTEGER PRIMARY KEY CHECK (id = 1), live_until INTEGER NOT NULL);
    `),
  // 4: whether every connected node was sent the latest view (standing shares end only once it was).
  (sql) => sql.exec("ALTER TABLE node_view ADD COLUMN pushed INTEGER NOT NULL DEFAULT 1"),
  // 5: what each node may be using of each limit, noted with the grants (null: not noted, by an older instance).
  (sql) => sql.exec("ALTER TABLE node_grants ADD COLUMN bounds TEXT"),
];

/** A lease not released by the gateway is reclaimed after this long, so a crashed gateway cannot leak slots. */
export const LEASE_TTL_MS = 10 * MINUTE;
/** Sessions a gate starts are told to the account's session index this soon (one call for all started meanwhile). */
const INDEX_DELAY_MS = SECOND;

/** How far past its longest lease the gate notes that grants may be live (a row written at most once per this). */
const GRANTS_NOTED_AHEAD_MS = MINUTE;
/**
 * A node's use is noted with this much room (the row is written again only when the node's use outgrows it): a
 * restart counts a node at its noted use until the node renews.
 */
const NOTED_ROOM = 1.5;

/** What each node may be using, per `product:kind` and node (see `NodeShares.counts`). */
type GrantBounds = Record<string, Record<string, number>>;

/** A push that failed is tried again this soon. */
const PUSH_RETRY_MS = SECOND;

/** The gateway may reuse an allow this long (at most 60 s: whitelist removal and deletion take effect within 60 s). */
export const MAX_CACHE_TTL_S = 30;

/**
 * One per sub-user (addressed by its gateway name). Decides each proxy request: credentials or whitelist,
 * status, product, the account's pool and the sub-user's monthly cap, rolling 1-second rps and open-lease
 * concurrency, and pins sticky sessions. `decide` never awaits, so the limits are exact under concurrent
 * calls. Internals are `#private`: callers use `SubuserGateClient`.
 */
export class SubuserGate extends DurableObject {
  readonly #sql: SqlStorage;
  #config: GateConfig | null = null;
  #whitelisted: WhitelistCheck = () => false;
  readonly #requests = new SlidingLog(SECOND);
  /** Open leases: when each is reclaimed, and the sticky session it was given. */
  readonly #leases = new Map<string, { expiresAt: number; session: string | null }>();
  readonly #sessions: SessionBook;
  readonly #alarm: Alarm;
  /** What gateway nodes know of the sub-user, its version, and whether every connected node was sent it. */
  #nodeView: { version: number; view: string; pushed: boolean } = { version: 0, view: "", pushed: true };
  /**
   * The products whose limits are leased to nodes (the sub-user is busy there); the other limited products' limits
   * are standing shares, each node slot using its part without asking (docs/gateway.md, "Standing shares").
   */
  readonly #leased = new Set<GatewayProduct>();
  /** Standing shares of a product being ended: renewals wait until every node was told. */
  readonly #standingDown = new Map<GatewayProduct, Promise<void>>();
  /** The nodes' shares of each product's limits (memory: a restart recovers as `NodeShares` says). */
  readonly #shares = new Map<string, NodeShares>();
  /** When this instance started: grants made before it are unknown until their leases have ended. */
  readonly #startedAt = now();
  /**
   * Until when grants to nodes may be live, as stored: written ahead a minute at a time (one row a minute while
   * nodes renew), so that a restart knows whether an instance before it may have granted shares still in force.
   */
  #grantsLiveUntil = 0;
  /** Whether an instance before this one may have granted shares still in force. */
  readonly #grantedBefore: boolean;
  /**
   * What the instance before this one noted each node may be using (null: it noted nothing, its grants are
   * unknown): each node is counted at it until it renews, so that one holding nothing (a node started again, say)
   * is granted at once what the others cannot be using.
   */
  readonly #notedBefore: GrantBounds | null;
  /** What the row notes now (null: nothing, while grants from an instance that noted nothing may be live). */
  #noted: GrantBounds | null;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#alarm = new Alarm(ctx.storage);
    this.#sessions = new SessionBook(ctx.storage, {
      subuserId: () => this.#config?.subuserId ?? "",
      gateName: () => this.#config?.name ?? "",
    });
    migrate(ctx.storage, "subuser_gate", GATE_STORAGE);
    const stored = this.#sql.exec<{ value: string }>("SELECT value FROM config WHERE id = 1").toArray()[0];
    if (stored) this.#apply(JSON.parse(stored.value) as GateConfig);
    const view = this.#sql
      .exec<{ version: number; view: string; pushed: number }>("SELECT version, view, pushed FROM node_view")
      .toArray()[0];
    if (view) this.#nodeView = { version: view.version, view: view.view, pushed: view.pushed === 1 };
    const grants = this.#sql
      .exec<{ live_until: number; bounds: string | null }>("SELECT live_until, bounds FROM node_grants")
      .toArray()[0];
    this.#grantsLiveUntil = grants?.live_until ?? 0;
    this.#grantedBefore = this.#grantsLiveUntil > this.#startedAt;
    this.#notedBefore = !this.#grantedBefore ? {} : grants?.bounds ? (JSON.parse(grants.bounds) as GrantBounds) : null;
    this.#noted = this.#notedBefore;
    // A view no node was sent (the last instance stopped before its push, or the push failed) is pushed again.
    if (view && !this.#nodeView.pushed) this.#alarm.wakeBy(this.#startedAt);
    if (view && this.#config) {
      const standing = (JSON.parse(view.view) as Partial<NodeSnapshot>).standing;
      // A view from before standing shares: its limits were leased, maybe still.
      for (const product of limitedProducts(this.#config)) {
        if (standing ? !standing.includes(product) : this.#grantedBefore) this.#leased.add(product);
      }
    }
    for (const lease of this.#sql.exec<{ id: string; expires_at: number; session: string | null }>(
      "SELECT id, expires_at, session FROM leases",
    )) {
      this.#leases.set(lease.id, { expiresAt: lease.expires_at, session: lease.session });
    }
  }

  configure(config: GateConfig): void {
    this.#apply(config);
    this.#sql.exec("INSERT OR REPLACE INTO config (id, value) VALUES (1, ?)", JSON.stringify(config));
    this.ctx.waitUntil(this.#publishView(config));
  }

  /** What a gateway node needs to decide this sub-user's requests itself; null before the gate is configured. */
  snapshot(config?: GateConfig): NodeSnapshot | null {
    if (config) this.configure(config);
    const current = this.#config;
    return current ? { ...nodeView(current, this.#leased, now()), version: this.#nodeView.version } : null;
  }

  /**
   * A node's renewal of its shares of a product's limits: what it may enforce until the lease ends. A renewal of a
   * product with standing shares ends them first (every node is told; each slot's share is counted until its node
   * renews or has stopped using it). Shares never sum past a limit (`NodeShares`); a limit the sub-user lacks is
   * answered null.
   */
  async renewShares(renewal: ShareRenewal): Promise<ShareGrant | null> {
    const limited = this.#config && limitedProducts(this.#config).includes(renewal.product);
    if (limited && !this.#leased.has(renewal.product)) await this.#standDown(renewal.product);
    const config = this.#config;
    if (!config) return null;
    const at = now();
    const limits = config.limits[renewal.product] ?? { concurrent: null, rps: null };
    const share = (limit: number | null, kind: "concurrent" | "rps", inUse: number) =>
      limit === null
        ? null
        : this.#nodeShares(renewal.product, kind).renew(
            limit,
            { node: renewal.node, slot: renewal.slot, held: renewal.held[kind], inUse, want: renewal.want[kind] },
            at,
          );
    const concurrent = share(limits.concurrent, "concurrent", renewal.open);
    const rps = share(limits.rps, "rps", renewal.recent);
    // Noted before the answer leaves (nothing awaits in between): a restart knows every grant that may be live.
    this.#noteGrants(renewal.product, renewal.node, at);
    const cut = [...new Set([...(concurrent?.cut ?? []), ...(rps?.cut ?? [])])];
    if (cut.length > 0) {
      const message: GatewayPush = { type: "lease_cut", name: config.name, product: renewal.product };
      this.ctx.waitUntil(new GatewayHubClient(this.env).publish(message, cut));
    }
    const expiresAt = Math.min(concurrent?.expiresAt ?? at + QUIET_LEASE_MS, rps?.expiresAt ?? at + QUIET_LEASE_MS);
    // Once every share has ended, the limits stand again.
    this.#alarm.wakeBy(expiresAt + 1);
    return {
      concurrent: concurrent?.granted ?? null,
      rps: rps?.granted ?? null,
      expiresAt,
      version: this.#nodeView.version,
    };
  }

  /**
   * A node's sticky session: the active session of that username, or a new one. The exit the node chose pins a
   * session that has none, so every node uses the same exit for it.
   */
  pinSession(spec: SessionSpec, exitIp: string): SessionPin {
    const at = now();
    const pin = this.#sessions.pin(spec, at, exitIp);
    // A session started now: the account's session index is told within a second.
    if (pin.startedAt === at) this.#alarm.wakeBy(at + INDEX_DELAY_MS);
    if (pin.exitIp !== null) return pin;
    // A session an authorize started has no exit yet: this node's pins it.
    return this.#sessions.pinExit(pin.id, exitIp, false) ?? pin;
  }

  /** Decides one proxy request. `config` (loaded from D1 by the client) is applied first when given. */
  decide(input: DecideInput, config?: GateConfig): Decision {
    if (config) this.configure(config);
    const current = this.#config;
    if (!current) return { outcome: "unconfigured" };
    return this.#decide(current, input);
  }

  /** The rules every gateway node runs too (`platform/gateway-rules`), against this gate's own counts. */
  #decide(config: GateConfig, input: DecideInput): Decision {
    const at = now();
    const whitelisted = () => this.#whitelisted(input.product, input.sourceIp);
    const access = { product: input.product, passwordHash: input.passwordHash, whitelisted };
    const refused = accessRefusal(accessStateOf(config, at), access, at);
    if (refused) return deny(refused);
    const limits = config.limits[input.product] ?? { concurrent: null, rps: null };
    const open = limits.concurrent === null ? 0 : this.#openLeases(at, limits.concurrent);
    const limited = placeRefusal(limits, this.#requests, open, true, at);
    if (limited) return deny(limited);

    this.#requests.add(at);
    const lease = `${config.name}.${randomString(20)}`;
    const session = input.session ? this.#sessions.pin(input.session, at) : null;
    this.#leases.set(lease, { expiresAt: at + LEASE_TTL_MS, session: session?.id ?? null });
    this.#sql.exec(
      "INSERT INTO leases (id, expires_at, session) VALUES (?, ?, ?)",
      lease,
      at + LEASE_TTL_MS,
      session?.id ?? null,
    );
    if (session) this.#alarm.wakeBy(at + INDEX_DELAY_MS);
    return {
      outcome: "allow",
      subuserId: config.subuserId,
      lease,
      cacheTtlS: this.#cacheTtl(config, input, at),
      session,
    };
  }

  /** A pool's latest figures: the gate keeps the highest it was told, so late pushes cannot undo newer ones. */
  updatePool(product: BandwidthProduct, figures: PoolFigures): void {
    const config = this.#config;
    if (!config) return;
    const known = config.pools[product];
    config.pools[product] = {
      purchasedBytes: Math.max(known?.purchasedBytes ?? 0, figures.purchasedBytes),
      usedBytes: Math.max(known?.usedBytes ?? 0, figures.usedBytes),
    };
    this.configure(config);
  }

  /** The sub-user's usage of a month (UTC), for its monthly cap; a newer month replaces an older one. */
  updateMonthUsage(month: string, usedBytes: number): void {
    const config = this.#config;
    if (!config) return;
    const known = config.monthUsage;
    if (known && known.month > month) return;
    config.monthUsage = { month, usedBytes: known?.month === month ? Math.max(known.usedBytes, usedBytes) : usedBytes };
    this.configure(config);
  }

  /**
   * Matches sticky usage of records that named no session (older gateways) to its sessions, pinning exits as the
   * usage shows them; returns who each usage's session is (null: none).
   */
  resolveSessions(usages: SessionUsage[]): Array<SessionIdentity | null> {
    return this.#sessions.resolve(usages);
  }

  terminateSession(id: string): SessionSnapshot | null {
    const at = now();
    const snapshot = this.#sessions.terminate(id, at);
    if (snapshot) this.#alarm.wakeBy(at + TERMINATED_KEPT_MS);
    if (snapshot && this.#config) {
      const ended: GatewayPush = { type: "session_ended", name: this.#config.name, session: id };
      this.ctx.waitUntil(new GatewayHubClient(this.env).publish(ended));
    }
    return snapshot;
  }

  /**
   * Hands standing shares back to products whose leases have all ended, pushes a view no node was sent yet, tells
   * the account's session index of the sessions started (one call for all of them), forgets expired sessions (and
   * terminated ones after a day); then sleeps until the next is due.
   */
  override async alarm(): Promise<void> {
    this.#alarm.rang();
    await this.#standUp();
    if (!this.#nodeView.pushed) await this.#pushView();
    const config = this.#config;
    const started = this.#sessions.takeStarted();
    // The account's first store, sharded or not: readers merge a session's copies across an account's stores by id.
    if (config && started.length > 0) await new TrafficStoreClient(this.env, config.accountId).upsertSessions(started);
    const at = now();
    const next = this.#sessions.purge(at);
    if (next !== null) this.#alarm.wakeBy(Math.max(at + 1, next));
  }

  /**
   * Frees a concurrency slot; `pin` (the exit the connection used) pins its sticky session when it has none, or
   * moves it on a repin. Releasing an unknown or already released lease is harmless.
   */
  release(lease: string, pin?: ExitPin): boolean {
    const known = this.#leases.get(lease);
    if (!known) return false;
    if (pin && known.session) this.#sessions.pinExit(known.session, pin.exitIp, pin.repinned);
    this.#leases.delete(lease);
    this.#sql.exec("DELETE FROM leases WHERE id = ?", lease);
    return true;
  }

  /**
   * Notes until when grants may be live (a lease and a minute ahead, so at most once a minute) and what each node may
   * be using of each limit, with room: written again when the renewing node's use outgrows what is noted.
   */
  #noteGrants(product: GatewayProduct, node: string, at: number): void {
    const extend = this.#grantsLiveUntil < at + QUIET_LEASE_MS;
    const outgrown = (["concurrent", "rps"] as const).some((kind) => {
      const key = `${product}:${kind}`;
      const counted = this.#shares.get(key)?.counts(at)[node] ?? 0;
      return this.#noted !== null && counted > (this.#noted[key]?.[node] ?? 0);
    });
    if (!extend && !outgrown) return;
    if (extend) this.#grantsLiveUntil = at + QUIET_LEASE_MS + GRANTS_NOTED_AHEAD_MS;
    // Grants of an instance that noted none may be live until a lease after this one started: nothing is noted then.
    const unknownBefore = this.#notedBefore === null && at < this.#startedAt + QUIET_LEASE_MS;
    this.#noted = unknownBefore ? null : this.#bounds(at);
    this.#sql.exec(
      "INSERT OR REPLACE INTO node_grants (id, live_until, bounds) VALUES (1, ?, ?)",
      this.#grantsLiveUntil,
      this.#noted === null ? null : JSON.stringify(this.#noted),
    );
  }

  /** What each node may be using of each limit, with room; an instance before's notes while they may be live. */
  #bounds(at: number): GrantBounds {
    const bounds: GrantBounds = {};
    if (this.#notedBefore !== null && at < this.#startedAt + QUIET_LEASE_MS) {
      for (const [key, nodes] of Object.entries(this.#notedBefore)) if (!this.#shares.has(key)) bounds[key] = nodes;
    }
    for (const [key, shares] of this.#shares) {
      const counts = Object.entries(shares.counts(at));
      if (counts.length > 0) {
        bounds[key] = Object.fromEntries(counts.map(([node, counted]) => [node, Math.ceil(counted * NOTED_ROOM)]));
      }
    }
    return bounds;
  }

  #nodeShares(product: GatewayProduct, kind: "concurrent" | "rps"): NodeShares {
    const key = `${product}:${kind}`;
    let shares = this.#shares.get(key);
    if (!shares) {
      shares = new NodeShares({
        startedAt: this.#startedAt,
        inUseMs: kind === "rps" ? SECOND : QUIET_LEASE_MS,
        grantedBefore: this.#grantedBefore,
        noted: this.#notedBefore === null ? null : (this.#notedBefore[key] ?? {}),
      });
      const limit = this.#config?.limits[product]?.[kind] ?? null;
      // Standing shares whose end no node may have heard of yet (this instance restarted meanwhile) still count.
      if (!this.#nodeView.pushed && this.#leased.has(product) && limit !== null && this.#config) {
        shares.standDown(limit, gatewaySlots(this.env), this.#config.name);
      }
      this.#shares.set(key, shares);
    }
    return shares;
  }

  /**
   * Ends a product's standing shares: the product's limits are leased from now on, each slot's standing share is
   * counted until its node renews or has stopped using it, and every node is told. Concurrent renewals wait for the
   * same end.
   */
  #standDown(product: GatewayProduct): Promise<void> {
    const ending = this.#standingDown.get(product);
    if (ending) return ending;
    const config = this.#config as GateConfig;
    this.#leased.add(product);
    const limits = config.limits[product] ?? { concurrent: null, rps: null };
    for (const kind of ["concurrent", "rps"] as const) {
      const limit = limits[kind];
      if (limit !== null) this.#nodeShares(product, kind).standDown(limit, gatewaySlots(this.env), config.name);
    }
    const told = this.#publishView(config).finally(() => this.#standingDown.delete(product));
    this.#standingDown.set(product, told);
    return told;
  }

  /** Products whose leases have all ended get standing shares again (every node is told); else wakes when due. */
  async #standUp(): Promise<void> {
    const config = this.#config;
    if (!config || this.#leased.size === 0) return;
    const at = now();
    let stood = false;
    for (const product of [...this.#leased]) {
      if (this.#standingDown.has(product)) continue;
      const ends = (["concurrent", "rps"] as const).map((kind) => this.#nodeShares(product, kind).liveUntil(at));
      const lastEnds = Math.max(...ends.map((end) => end ?? 0));
      if (lastEnds > 0) {
        this.#alarm.wakeBy(lastEnds + 1);
        continue;
      }
      this.#leased.delete(product);
      this.#shares.delete(`${product}:concurrent`);
      this.#shares.delete(`${product}:rps`);
      stood = true;
    }
    if (stood) await this.#publishView(config);
  }

  /**
   * When what nodes decide from changed (status, passwords, whitelist, limits, products, a pool, the cap or standing
   * shares), its version grows and every connected node is told at once. Resolves once told (or the push failed:
   * it is tried again).
   */
  #publishView(config: GateConfig): Promise<void> {
    const view = nodeView(config, this.#leased, now());
    const text = JSON.stringify(view);
    if (text === this.#nodeView.view) return Promise.resolve();
    this.#nodeView = { version: this.#nodeView.version + 1, view: text, pushed: false };
    this.#sql.exec(
      "INSERT OR REPLACE INTO node_view (id, version, view, pushed) VALUES (1, ?, ?, 0)",
      this.#nodeView.version,
      text,
    );
    return this.#pushView();
  }

  /**
   * Sends the current view to every connected node. Once sent, the standing shares it ended are counted only until
   * every node has stopped using them; a failed push is tried again.
   */
  async #pushView(): Promise<void> {
    const { version, view } = this.#nodeView;
    const snapshot = { ...(JSON.parse(view) as Omit<NodeSnapshot, "version">), version };
    let standingEndsBy: number;
    try {
      const message: GatewayPush = { type: "subuser", subuser: snapshotOnWire(snapshot) };
      ({ standingEndsBy } = await new GatewayHubClient(this.env).publish(message));
    } catch {
      this.#alarm.wakeBy(now() + PUSH_RETRY_MS);
      return;
    }
    if (this.#nodeView.version !== version) return;
    this.#nodeView.pushed = true;
    this.#sql.exec("UPDATE node_view SET pushed = 1 WHERE version = ?", version);
    for (const shares of this.#shares.values()) shares.confirmStandDown(standingEndsBy);
  }

  #apply(config: GateConfig): void {
    this.#config = config;
    this.#whitelisted = whitelistCheck(config.whitelist);
  }

  /** Open leases; expired ones are swept only when they could make the difference. */
  #openLeases(at: number, limit: number): number {
    if (this.#leases.size < limit) return this.#leases.size;
    for (const [lease, { expiresAt }] of this.#leases) {
      if (expiresAt <= at) {
        this.#leases.delete(lease);
        this.#sql.exec("DELETE FROM leases WHERE id = ?", lease);
      }
    }
    return this.#leases.size;
  }

  /** A decision made with a rotated-out password may only be reused while that password still works. */
  #cacheTtl(config: GateConfig, input: DecideInput, at: number): number {
    const current = [{ sha256: config.passwordHash, until: null }];
    const usedPrevious = input.passwordHash !== null && !passwordAccepted(current, input.passwordHash, at);
    if (!usedPrevious || config.previousPasswordUntil === null) return MAX_CACHE_TTL_S;
    return Math.max(0, Math.min(MAX_CACHE_TTL_S, Math.floor((config.previousPasswordUntil - at) / SECOND)));
  }
}

/** What the access rules read of the sub-user at `at`: what a node's snapshot carries of it too. */
function accessStateOf(
  config: GateConfig,
  at: number,
): Pick<NodeSnapshot, "status" | "products" | "passwords" | "exhausted" | "cap"> {
  return {
    status: config.status,
    products: config.products,
    passwords: [
      { sha256: config.passwordHash, until: null },
      ...(config.previousPasswordHash !== null &&
      config.previousPasswordUntil !== null &&
      config.previousPasswordUntil > at
        ? [{ sha256: config.previousPasswordHash, until: config.previousPasswordUntil }]
        : []),
    ],
    exhausted: Object.fromEntries(
      config.products
        .filter((product): product is BandwidthProduct => product !== "isp")
        .map((product) => [product, exhausted(config.pools[product])]),
    ),
    cap: { month: utcMonth(at), reached: overCap(config, at) },
  };
}

/** The gate's view as nodes decide from it (without its version). */
function nodeView(config: GateConfig, leased: Set<GatewayProduct>, at: number): Omit<NodeSnapshot, "version"> {
  return {
    name: config.name,
    subuserId: config.subuserId,
    ...accessStateOf(config, at),
    whitelist: config.whitelist,
    limits: config.limits,
    standing: limitedProducts(config).filter((product) => !leased.has(product)),
  };
}

/** The sub-user's products with a limit of concurrency or of requests per second. */
function limitedProducts(config: GateConfig): GatewayProduct[] {
  return config.products.filter((product) => {
    const limits = config.limits[product];
    return limits !== undefined && (limits.concurrent !== null || limits.rps !== null);
  });
}

function exhausted(pool: PoolFigures | undefined): boolean {
  return !pool || pool.usedBytes >= pool.purchasedBytes;
}

function overCap(config: GateConfig, at: number): boolean {
  const usage = config.monthUsage;
  return (
    config.trafficLimitBytes !== null &&
    usage !== null &&
    usage.month === utcMonth(at) &&
    usage.usedBytes >= config.trafficLimitBytes
  );
}

function deny(refused: Refusal): Decision {
  return { outcome: "deny", ...refused };
}
