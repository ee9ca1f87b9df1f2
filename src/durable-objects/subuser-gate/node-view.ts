import { GatewayHubClient } from "../gateway-hub";
import type { GatewayPush } from "../gateway-hub/contract";
import { type NodeSnapshot, snapshotOnWire } from "./contract";

/** What nodes decide from, as the gate last stored it (without its version). */
export type NodeViewBody = Omit<NodeSnapshot, "version">;

/**
 * The version of what gateway nodes know of the sub-user, and its pushes: when what they decide from changes, the
 * version grows and every connected node is told at once. Stored, so a restart pushes a view no node was sent.
 */
export class NodeView {
  readonly #sql: SqlStorage;
  readonly #env: Cloudflare.Env;
  #current: { version: number; text: string; pushed: boolean } = { version: 0, text: "", pushed: true };

  constructor(sql: SqlStorage, env: Cloudflare.Env) {
    this.#sql = sql;
    this.#env = env;
    const stored = sql
      .exec<{ version: number; view: string; pushed: number }>("SELECT version, view, pushed FROM node_view")
      .toArray()[0];
    if (stored) this.#current = { version: stored.version, text: stored.view, pushed: stored.pushed === 1 };
  }

  get version(): number {
    return this.#current.version;
  }

  /** Whether every connected node was sent the latest view. */
  get pushed(): boolean {
    return this.#current.pushed;
  }

  /** The stored view (null: none yet). */
  stored(): NodeViewBody | null {
    return this.#current.text === "" ? null : (JSON.parse(this.#current.text) as NodeViewBody);
  }

  /**
   * Stores `view` under a new version when it changed, and pushes it (or the unchanged view, if it is owed). Resolves with what the push answered: by when
   * every node has read it or stopped using standing shares (null: unchanged, or the push failed and is owed).
   */
  update(view: NodeViewBody): Promise<number | null> {
    const text = JSON.stringify(view);
    if (text === this.#current.text) return this.#current.pushed ? Promise.resolve(null) : this.push();
    this.#current = { version: this.#current.version + 1, text, pushed: false };
    this.#sql.exec(
      "INSERT OR REPLACE INTO node_view (id, version, view, pushed) VALUES (1, ?, ?, 0)",
      this.#current.version,
      text,
    );
    return this.push();
  }

  /** Sends the current view to every connected node: by when standing shares it ended are unused, or null (failed). */
  async push(): Promise<number | null> {
    const { version, text } = this.#current;
    const snapshot: NodeSnapshot = { ...(JSON.parse(text) as NodeViewBody), version };
    let standingEndsBy: number;
    try {
      const message: GatewayPush = { type: "subuser", subuser: snapshotOnWire(snapshot) };
      ({ standingEndsBy } = await new GatewayHubClient(this.#env).publish(message));
    } catch {
      return null;
    }
    if (this.#current.version !== version) return null;
    this.#current.pushed = true;
    this.#sql.exec("UPDATE node_view SET pushed = 1 WHERE version = ?", version);
    return standingEndsBy;
  }
}
