import type { ApiKeyGuard } from "./api-key-guard";
import type { AdmitResult, GuardConfig, IdempotencyRequest, Settlement, WindowLimits, WindowVerdict } from "./contract";

/**
 * The typed client of one key's `ApiKeyGuard`. It owns the first-use step: a guard that does not know its key
 * yet (first call, or lost storage) is configured from D1 by `loadConfig` within the retried call.
 */
export class ApiKeyGuardClient {
  readonly #stub: DurableObjectStub<ApiKeyGuard>;
  readonly #loadConfig: () => Promise<GuardConfig | null>;

  constructor(env: Cloudflare.Env, name: string, loadConfig: () => Promise<GuardConfig | null> = async () => null) {
    this.#stub = env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(name));
    this.#loadConfig = loadConfig;
  }

  async admit(idempotency: IdempotencyRequest | null): Promise<AdmitResult> {
    const result = await this.#stub.admit(idempotency);
    if (result.outcome !== "unconfigured") return result;
    const config = await this.#loadConfig();
    return config ? this.#stub.admit(idempotency, config) : result;
  }

  admitUnauthenticated(limits: WindowLimits): Promise<WindowVerdict> {
    return this.#stub.admitUnauthenticated(limits);
  }

  async configure(config: GuardConfig): Promise<void> {
    await this.#stub.configure(config);
  }

  /** Returns the account revision after the settlement. */
  settle(settlement: Settlement): Promise<string> {
    return this.#stub.settle(settlement);
  }

  async accountChanged(version: number): Promise<void> {
    await this.#stub.accountChanged(version);
  }
}
