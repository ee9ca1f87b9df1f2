import { DurableObject } from "cloudflare:workers";
import { capKindOf } from "../../platform/cap-periods";
import { now, SECOND, utcDay, utcMonth } from "../../platform/clock";
import { accessRefusal, type Limits, passwordAccepted, placeRefusal, type Refusal } from "../../platform/gateway-rules";
import { type WhitelistCheck, whitelistCheck } from "../../platform/ip";
import { STANDING_GRACE_MS } from "../../platform/standing-shares";
import { keyHash, sessionKey } from "../../platform/sticky-sessions";
import { GatewayHubClient, gatewaySlots } from "../gateway-hub";
import type { GatewayPush } from "../gateway-hub/contract";
import { Alarm } from "../shared/alarm";
import { migrate, type StorageStep } from "../shared/storage-versions";
import { TrafficStoreClient } from "../traffic-store";
import type { SessionUsage } from "../traffic-store/contract";
import { ConnectionLeases } from "./connection-leases";
import type {
  BandwidthProduct,
  DecideInput,
  Decision,
  ExitPin,
  GateConfig,
  GatewayProduct,
  NodeSnapshot,
  PoolFigures,
  SessionEnd,
  SessionEnding,
  SessionPin,
  SessionSpec,
  ShareGrant,
  ShareRenewal,
} from "./contract";
import { TERMINATED_KEPT_MS } from "./contract";
import { NodeView, type NodeViewBody } from "./node-view";
import { SessionBook, type SessionIdentity } from "./session-book";
import { GENERATIONS_KEPT_MS, SessionGenerations } from "./session-generations";
import { ShareLeasing } from "./share-leasing";

/**
 * The gate's storage steps (`migrate`; its `SessionBook` and `SessionGenerations` have their own): append, never
 * edit.
 */
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
  // 6: a lease names its product: the per-connection path's use is counted per product, as its shares are.
  (sql) => sql.exec("ALTER TABLE leases ADD COLUMN product TEXT"),
];

/** Sessions a gate starts are told to the account's session index this soon (one call for all started meanwhile). */
const INDEX_DELAY_MS = SECOND;
/** A push that failed is tried again this soon. */
const PUSH_RETRY_MS = SECOND;
/** The gateway may reuse an allow this long (at most 60 s: whitelist removal and deletion take effect within 60 s). */
export const MAX_CACHE_TTL_S = 30;
/**
 * The per-connection path's name among the nodes that share a sub-user's limits (node ids are `[a-z0-9-]`, so no
 * node can take it).
 */
export const CONNECTIONS_PATH = "@connections";
/** The per-connection path's shares are renewed this long before they end while its leases are open. */
const KEEP_SHARES_AHEAD_MS = SECOND;

/**
 * One per sub-user (addressed by its gateway name): the storage and RPC shell around what decides its requests.
 * Gateway nodes decide at the node from its snapshot (`NodeView`) and their shares of its limits (`ShareLeasing`);
 * the per-connection path (`authorize`: gateways that ask per connection, and the sandbox's credential test) runs
 * the same rules (`platform/gateway-rules`) here, its open connections kept by `ConnectionLeases` and its limits a
 * share taken like a node's, so the two paths together never pass a limit. Sticky sessions decided at the node
 * need only their keys' generations (`SessionGenerations`, in the snapshot; termination bumps them); the
 * per-connection path's sessions are its `SessionBook`. Internals are `#private`: callers use `SubuserGateClient`.
 */
export class SubuserGate extends DurableObject {
  readonly #sql: SqlStorage;
  #config: GateConfig | null = null;
  #whitelisted: WhitelistCheck = () => false;
  readonly #connections: ConnectionLeases;
  readonly #sessions: SessionBook;
  readonly #generations: SessionGenerations;
  readonly #alarm: Alarm;
  readonly #view: NodeView;
  readonly #leasing: ShareLeasing;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#alarm = new Alarm(ctx.storage);
    this.#sessions = new SessionBook(ctx.storage, {
      subuserId: () => this.#config?.subuserId ?? "",
      gateName: () => this.#config?.name ?? "",
    });
    this.#generations = new SessionGenerations(ctx.storage);
    migrate(ctx.storage, "subuser_gate", GATE_STORAGE);
    const stored = this.#sql.exec<{ value: string }>("SELECT value FROM config WHERE id = 1").toArray()[0];
    if (stored) this.#apply(JSON.parse(stored.value) as GateConfig);
    this.#connections = new ConnectionLeases(this.#sql);
    this.#view = new NodeView(this.#sql, env);
    const startedAt = now();
    this.#leasing = new ShareLeasing(this.#sql, {
      startedAt,
      slots: gatewaySlots(env),
      name: () => this.#config?.name ?? "",
      limits: (product) => this.#config?.limits[product] ?? null,
      tellNodes: () => this.#tellNodes(),
      viewPushed: () => this.#view.pushed,
    });
    const view = this.#view.stored();
    // A view no node was sent (the last instance stopped before its push, or the push failed) is pushed again.
    if (view && !this.#view.pushed) this.#alarm.wakeBy(startedAt);
    if (view && this.#config) this.#leasing.restore(limitedProducts(this.#config), view.standing ?? null);
  }

  configure(config: GateConfig): void {
    this.#apply(config);
    this.#sql.exec("INSERT OR REPLACE INTO config (id, value) VALUES (1, ?)", JSON.stringify(config));
    this.ctx.waitUntil(this.#tellNodes());
  }

  /** What a gateway node needs to decide this sub-user's requests itself; null before the gate is configured. */
  snapshot(config?: GateConfig): NodeSnapshot | null {
    if (config) this.configure(config);
    const current = this.#config;
    return current ? { ...this.#viewOf(current, now()), version: this.#view.version } : null;
  }

  /**
   * A node's renewal of its shares of a product's limits: what it may enforce until the lease ends. A renewal of a
   * product with standing shares ends them first (`ShareLeasing.leaseFrom`); a limit the sub-user lacks is answered
   * null.
   */
  async renewShares(renewal: ShareRenewal): Promise<ShareGrant | null> {
    if (this.#limited(renewal.product)) await this.#leasing.leaseFrom(renewal.product);
    const config = this.#config;
    if (!config) return null;
    const at = now();
    const shares = this.#leasing.renew(
      renewal.product,
      limitsOf(config, renewal.product),
      {
        node: renewal.node,
        slot: renewal.slot,
        held: renewal.held,
        inUse: { concurrent: renewal.open, rps: renewal.recent },
        want: renewal.want,
      },
      at,
    );
    this.#cut(config, renewal.product, shares.cut, at);
    // Once every share has ended, the limits stand again.
    this.#alarm.wakeBy(shares.expiresAt + 1);
    return { concurrent: shares.concurrent, rps: shares.rps, expiresAt: shares.expiresAt, version: this.#view.version };
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

  /**
   * Decides one request on a new connection (the per-connection path). `config` (loaded from D1 by the client) is
   * applied first when given. A limited product's standing shares end first; while the nodes may still be using
   * them (at most a grace after they were told), a request the rest of the limit cannot take waits for them.
   */
  async decide(input: DecideInput, config?: GateConfig): Promise<Decision> {
    if (config) this.configure(config);
    const current = this.#config;
    if (!current) return { outcome: "unconfigured" };
    const refused = this.#accessRefusal(current, input, now());
    if (refused) return deny(refused);
    if (!this.#limited(input.product)) return this.#decide(input);
    await this.#leasing.leaseFrom(input.product);
    const decision = this.#decide(input);
    if (decision.outcome !== "deny" || decision.status !== 429) return decision;
    const at = now();
    const standingUntil = this.#leasing.standingCountedUntil(input.product, at);
    if (standingUntil === null || standingUntil > at + STANDING_GRACE_MS) return decision;
    await new Promise((resolve) => setTimeout(resolve, standingUntil - at + 1));
    return this.#decide(input);
  }

  /** The rules every gateway node runs too, against the per-connection path's own counts and shares. Never awaits. */
  #decide(input: DecideInput): Decision {
    const config = this.#config;
    if (!config) return { outcome: "unconfigured" };
    const at = now();
    const refused = this.#accessRefusal(config, input, at);
    if (refused) return deny(refused);
    const admitted = this.#connections.admitted(input.product);
    const open = this.#connections.open(input.product, at);
    const limits = this.#limited(input.product)
      ? this.#connectionShares(config, input.product, at, 1)
      : limitsOf(config, input.product);
    const limited = placeRefusal(limits, admitted, open, true, at);
    if (limited) return deny(limited);

    const session = input.session ? this.#sessions.pin(input.session, at) : null;
    const lease = this.#connections.take(config.name, input.product, session?.id ?? null, at);
    if (session) this.#alarm.wakeBy(at + INDEX_DELAY_MS);
    return {
      outcome: "allow",
      subuserId: config.subuserId,
      lease,
      cacheTtlS: this.#cacheTtl(config, input, at),
      session,
      targetRules: config.targetRules ?? null,
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

  /**
   * The sub-user's usage of a period, for its caps: a UTC month (`2026-11`), a UTC day (`2026-11-28`) or its life
   * (`lifetime`). Figures only grow and a newer period replaces an older one, so late pushes cannot undo newer ones.
   */
  updateUsage(period: string, usedBytes: number): void {
    const config = this.#config;
    if (!config) return;
    const kind = capKindOf(period);
    if (kind === "lifetime") {
      config.lifetimeUsedBytes = Math.max(config.lifetimeUsedBytes ?? 0, usedBytes);
    } else if (kind === "day") {
      config.dayUsage = laterUsage(config.dayUsage ?? null, { day: period, usedBytes });
    } else {
      const known = config.monthUsage;
      if (known && known.month > period) return;
      config.monthUsage = {
        month: period,
        usedBytes: known?.month === period ? Math.max(known.usedBytes, usedBytes) : usedBytes,
      };
    }
    this.configure(config);
  }

  /**
   * Matches sticky usage of records that named no session (older gateways) to its sessions, pinning exits as the
   * usage shows them; returns who each usage's session is (null: none).
   */
  resolveSessions(usages: SessionUsage[]): Array<SessionIdentity | null> {
    return this.#sessions.resolve(usages);
  }

  /**
   * Terminates a sticky session. A session this gate started (`SessionBook`: the per-connection path, and nodes of
   * the previous release) is ended here, and nodes of that release are told (`session_ended`). A session decided at
   * the node (`key` given) ends by bumping its key's generation past `generation` (idempotent: a retry changes
   * nothing more); every connected node is sent the snapshot before this answers, so the username's next request
   * gets a new exit at every node. A key is not bumped for a session of the gate's own that had already expired.
   */
  async terminateSession(ending: SessionEnding): Promise<SessionEnd> {
    const at = now();
    const book = this.#sessions.terminate(ending.id, at);
    if (book) {
      await this.#wakeBy(at + TERMINATED_KEPT_MS);
      if (this.#config) {
        const ended: GatewayPush = { type: "session_ended", name: this.#config.name, session: ending.id };
        this.ctx.waitUntil(new GatewayHubClient(this.env).publish(ended));
      }
    }
    if (ending.key === undefined || (book !== null && book.status !== "terminated")) return { book, generation: null };
    const bumped = this.#generations.bump(keyHash(sessionKey(ending.key)), ending.generation ?? 0, at);
    if (bumped.changed) await this.#wakeBy(at + GENERATIONS_KEPT_MS);
    // Also when unchanged: a retry sends a view whose push failed.
    await this.#tellNodes();
    return { book, generation: bumped.generation };
  }

  /**
   * Keeps the per-connection path's shares while its leases are open, hands standing shares back to products whose
   * leases have all ended, pushes a view no node was sent yet, tells the account's session index of the sessions
   * started (one call for all of them), forgets expired sessions (and terminated ones after a day) and keys'
   * generations after 30 days (telling the nodes); then sleeps until the next is due.
   */
  override async alarm(): Promise<void> {
    this.#alarm.rang();
    const config = this.#config;
    let at = now();
    if (config) {
      for (const product of this.#connections.busy(at, limitedProducts(config))) {
        if (this.#leasing.leased(product)) this.#connectionShares(config, product, at, 0);
      }
    }
    const { stood, wakeAt } = this.#leasing.standUp(at);
    if (wakeAt !== null) this.#alarm.wakeBy(wakeAt);
    if (stood || !this.#view.pushed) await this.#tellNodes();
    const started = this.#sessions.takeStarted();
    // The account's first store, sharded or not: readers merge a session's copies across an account's stores by id.
    if (config && started.length > 0) await new TrafficStoreClient(this.env, config.accountId).upsertSessions(started);
    at = now();
    const next = this.#sessions.purge(at);
    if (next !== null) this.#alarm.wakeBy(Math.max(at + 1, next));
    const generations = this.#generations.purge(at);
    if (generations.dropped > 0) await this.#tellNodes();
    if (generations.next !== null) this.#alarm.wakeBy(Math.max(at + 1, generations.next));
  }

  /**
   * Frees a concurrency slot; `pin` (the exit the connection used) pins its sticky session when it has none, or
   * moves it on a repin. Releasing an unknown or already released lease is harmless.
   */
  release(lease: string, pin?: ExitPin): boolean {
    const released = this.#connections.release(lease);
    if (!released) return false;
    if (pin && released.session) this.#sessions.pinExit(released.session, pin.exitIp, pin.repinned);
    const config = this.#config;
    // What the path no longer uses goes back to the nodes at once.
    if (config && released.product && this.#leasing.leased(released.product)) {
      this.#connectionShares(config, released.product, now(), 0);
    }
    return true;
  }

  /**
   * The per-connection path's renewal of its shares of a product's limits: counted at what it has in use (open
   * leases, its rolling second), wanting `more` besides. The alarm keeps them while leases are open.
   */
  #connectionShares(config: GateConfig, product: GatewayProduct, at: number, more: 0 | 1): Limits {
    const inUse = {
      concurrent: this.#connections.open(product, at),
      rps: this.#connections.admitted(product).count(at),
    };
    const want = { concurrent: inUse.concurrent + more, rps: inUse.rps + more };
    const renewal = { node: CONNECTIONS_PATH, slot: null, held: inUse, inUse, want };
    const shares = this.#leasing.renew(product, limitsOf(config, product), renewal, at);
    this.#cut(config, product, shares.cut, at);
    if (inUse.concurrent > 0) this.#alarm.wakeBy(shares.expiresAt - KEEP_SHARES_AHEAD_MS);
    this.#alarm.wakeBy(shares.expiresAt + 1);
    return { concurrent: shares.concurrent, rps: shares.rps };
  }

  /**
   * Asks the nodes that hold more than an even split to renew now (a push); the per-connection path, asked too,
   * gives back at once what it does not use.
   */
  #cut(config: GateConfig, product: GatewayProduct, cut: string[], at: number): void {
    const nodes = cut.filter((node) => node !== CONNECTIONS_PATH);
    if (nodes.length < cut.length) this.#connectionShares(config, product, at, 0);
    if (nodes.length === 0) return;
    const message: GatewayPush = { type: "lease_cut", name: config.name, product };
    this.ctx.waitUntil(new GatewayHubClient(this.env).publish(message, nodes));
  }

  /**
   * Tells every connected node what it decides from, when that changed (status, passwords, whitelist, limits,
   * products, a pool, the cap or standing shares) or a push is owed. Resolves once told: by when the standing shares
   * the push ended are unused (null: nothing to tell, or the push failed and is tried again).
   */
  async #tellNodes(): Promise<number | null> {
    const config = this.#config;
    if (!config) return null;
    const endsBy = await this.#view.update(this.#viewOf(config, now()));
    if (endsBy !== null) this.#leasing.confirmStandDown(endsBy);
    if (!this.#view.pushed) this.#alarm.wakeBy(now() + PUSH_RETRY_MS);
    return endsBy;
  }

  #viewOf(config: GateConfig, at: number): NodeViewBody {
    return {
      name: config.name,
      subuserId: config.subuserId,
      accountId: config.accountId,
      ownerTag: config.ownerTag ?? null,
      generations: this.#generations.view(),
      ...accessStateOf(config, at),
      whitelist: config.whitelist,
      limits: config.limits,
      standing: this.#leasing.standing(limitedProducts(config)),
    };
  }

  /**
   * Wakes the alarm by `at` unless it is set to ring before: after a restart the alarm's memory is empty, and a
   * far-off wake (a purge) must not replace a nearer one already stored (a push owed, shares to stand up).
   */
  async #wakeBy(at: number): Promise<void> {
    const stored = await this.ctx.storage.getAlarm();
    if (stored === null || stored > at) this.#alarm.wakeBy(at);
  }

  #accessRefusal(config: GateConfig, input: DecideInput, at: number): Refusal | null {
    const whitelisted = () => this.#whitelisted(input.product, input.sourceIp);
    const access = { product: input.product, passwordHash: input.passwordHash, whitelisted };
    return accessRefusal(accessStateOf(config, at), access, at);
  }

  #limited(product: GatewayProduct): boolean {
    return this.#config !== null && limitedProducts(this.#config).includes(product);
  }

  #apply(config: GateConfig): void {
    this.#config = config;
    this.#whitelisted = whitelistCheck(config.whitelist);
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
): Pick<
  NodeSnapshot,
  | "status"
  | "products"
  | "passwords"
  | "exhausted"
  | "cap"
  | "dayCap"
  | "lifetimeCapReached"
  | "expiresAt"
  | "targetRules"
> {
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
    dayCap: { day: utcDay(at), reached: overDayCap(config, at) },
    lifetimeCapReached:
      config.lifetimeLimitBytes != null && (config.lifetimeUsedBytes ?? 0) >= config.lifetimeLimitBytes,
    expiresAt: config.expiresAt ?? null,
    targetRules: config.targetRules ?? null,
  };
}

/** The sub-user's products with a limit of concurrency or of requests per second. */
function limitedProducts(config: GateConfig): GatewayProduct[] {
  return config.products.filter((product) => {
    const limits = config.limits[product];
    return limits !== undefined && (limits.concurrent !== null || limits.rps !== null);
  });
}

function limitsOf(config: GateConfig, product: GatewayProduct): Limits {
  return config.limits[product] ?? { concurrent: null, rps: null };
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

function overDayCap(config: GateConfig, at: number): boolean {
  const usage = config.dayUsage;
  return (
    config.dailyLimitBytes != null &&
    usage != null &&
    usage.day === utcDay(at) &&
    usage.usedBytes >= config.dailyLimitBytes
  );
}

/** A day's figure: a later day replaces an earlier one, the same day's only grows. */
function laterUsage(
  known: { day: string; usedBytes: number } | null,
  told: { day: string; usedBytes: number },
): { day: string; usedBytes: number } {
  if (!known || known.day < told.day) return told;
  if (known.day > told.day) return known;
  return { day: known.day, usedBytes: Math.max(known.usedBytes, told.usedBytes) };
}

function deny(refused: Refusal): Decision {
  return { outcome: "deny", ...refused };
}
