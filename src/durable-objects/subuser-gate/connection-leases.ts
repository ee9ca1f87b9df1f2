import { MINUTE, SECOND } from "../../platform/clock";
import { randomString } from "../../platform/crypto";
import { SlidingLog } from "../../platform/sliding-log";
import type { GatewayProduct } from "./contract";

/** A lease not released by the gateway is reclaimed after this long, so a crashed gateway cannot leak slots. */
export const LEASE_TTL_MS = 10 * MINUTE;

interface OpenLease {
  expiresAt: number;
  /** The sticky session it was given (its release pins the exit it used). */
  session: string | null;
  /** Null for a lease taken before leases named their product: it counts against every product. */
  product: GatewayProduct | null;
}

/**
 * The per-connection path's bookkeeping (`authorize`): each allowed connection holds a lease until the gateway
 * releases it (or it is reclaimed), and each product keeps its rolling second of admitted requests. The counts are
 * what this path has in use; its limits are its share of the sub-user's (`ShareLeasing`), as a node's are.
 */
export class ConnectionLeases {
  readonly #sql: SqlStorage;
  readonly #leases = new Map<string, OpenLease>();
  readonly #admitted = new Map<GatewayProduct, SlidingLog>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    for (const lease of sql.exec<{ id: string; expires_at: number; session: string | null; product: string | null }>(
      "SELECT id, expires_at, session, product FROM leases",
    )) {
      this.#leases.set(lease.id, {
        expiresAt: lease.expires_at,
        session: lease.session,
        product: lease.product as GatewayProduct | null,
      });
    }
  }

  /** The product's rolling second of admitted requests. */
  admitted(product: GatewayProduct): SlidingLog {
    let log = this.#admitted.get(product);
    if (!log) {
      log = new SlidingLog(SECOND);
      this.#admitted.set(product, log);
    }
    return log;
  }

  /** The product's open leases; expired ones are reclaimed first. */
  open(product: GatewayProduct, at: number): number {
    let open = 0;
    for (const [id, lease] of this.#leases) {
      if (lease.expiresAt <= at) this.#forget(id);
      else if (lease.product === null || lease.product === product) open++;
    }
    return open;
  }

  /** The products with open leases (every product, for a lease that names none). */
  busy(at: number, products: GatewayProduct[]): GatewayProduct[] {
    return products.filter((product) => this.open(product, at) > 0);
  }

  /** Admits one request on a new connection: its lease, named after the gate so a release needs no lookup. */
  take(gateName: string, product: GatewayProduct, session: string | null, at: number): string {
    this.admitted(product).add(at);
    const id = `${gateName}.${randomString(20)}`;
    this.#leases.set(id, { expiresAt: at + LEASE_TTL_MS, session, product });
    this.#sql.exec(
      "INSERT INTO leases (id, expires_at, session, product) VALUES (?, ?, ?, ?)",
      id,
      at + LEASE_TTL_MS,
      session,
      product,
    );
    return id;
  }

  /** Frees a lease: what it was (its sticky session, its product), or null when unknown or already released. */
  release(id: string): Pick<OpenLease, "session" | "product"> | null {
    const lease = this.#leases.get(id);
    if (!lease) return null;
    this.#forget(id);
    return lease;
  }

  #forget(id: string): void {
    this.#leases.delete(id);
    this.#sql.exec("DELETE FROM leases WHERE id = ?", id);
  }
}
