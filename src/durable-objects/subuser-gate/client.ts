import { refusal } from "../../platform/gateway-rules";
import type { BandwidthProduct } from "../../vocabulary";
import type { SessionUsage } from "../traffic-store/contract";
import type {
  DecideInput,
  Decision,
  ExitPin,
  GateConfig,
  NodeSnapshot,
  PoolFigures,
  SessionEnd,
  SessionEnding,
  SessionPin,
  SessionSpec,
  ShareGrant,
  ShareRenewal,
} from "./contract";
import type { SessionIdentity } from "./session-book";
import type { SubuserGate } from "./subuser-gate";

/**
 * The typed client of one sub-user's `SubuserGate` (addressed by the sub-user's gateway name). It owns the
 * first-use step: a gate that does not know its sub-user yet is configured from D1 by `loadConfig` within the
 * retried call; a name D1 does not know is refused like a wrong password.
 */
export class SubuserGateClient {
  readonly #stub: DurableObjectStub<SubuserGate>;
  readonly #loadConfig: () => Promise<GateConfig | null>;

  constructor(env: Cloudflare.Env, name: string, loadConfig: () => Promise<GateConfig | null> = async () => null) {
    this.#stub = env.SUBUSER_GATE.get(env.SUBUSER_GATE.idFromName(name));
    this.#loadConfig = loadConfig;
  }

  async decide(input: DecideInput): Promise<Decision> {
    const decision = await this.#stub.decide(input);
    if (decision.outcome !== "unconfigured") return decision;
    const config = await this.#loadConfig();
    if (!config) return { outcome: "deny", ...refusal("auth-failed") };
    return this.#stub.decide(input, config);
  }

  /** What a gateway node decides from; null for a name D1 does not know. */
  async snapshot(): Promise<NodeSnapshot | null> {
    const snapshot = await this.#stub.snapshot();
    if (snapshot) return snapshot;
    const config = await this.#loadConfig();
    return config ? this.#stub.snapshot(config) : null;
  }

  /** A node's new shares of the sub-user's limits of a product; null for an unknown name. */
  async renewShares(renewal: ShareRenewal): Promise<ShareGrant | null> {
    return (
      (await this.#stub.renewShares(renewal)) ?? ((await this.snapshot()) ? this.#stub.renewShares(renewal) : null)
    );
  }

  /** A node's sticky session (a known sub-user's: the node checked the credentials against its snapshot). */
  pinSession(spec: SessionSpec, exitIp: string): Promise<SessionPin> {
    return this.#stub.pinSession(spec, exitIp);
  }

  async configure(config: GateConfig): Promise<void> {
    await this.#stub.configure(config);
  }

  release(lease: string, pin?: ExitPin): Promise<boolean> {
    return this.#stub.release(lease, pin);
  }

  async updatePool(product: BandwidthProduct, figures: PoolFigures): Promise<void> {
    await this.#stub.updatePool(product, figures);
  }

  async updateUsage(period: string, usedBytes: number): Promise<void> {
    await this.#stub.updateUsage(period, usedBytes);
  }

  resolveSessions(usages: SessionUsage[]): Promise<Array<SessionIdentity | null>> {
    return this.#stub.resolveSessions(usages);
  }

  /**
   * Terminates a sticky session: the gate's own (the per-connection path's) by its id; one decided at the node by
   * bumping its key's generation past `generation` (idempotent), every connected node told before this resolves.
   */
  terminateSession(ending: SessionEnding): Promise<SessionEnd> {
    return this.#stub.terminateSession(ending);
  }
}
