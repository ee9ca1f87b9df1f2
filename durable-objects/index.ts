import type { ApiKeyGuard } from "./api-key-guard";
import type { SubuserGate } from "./subuser-gate";

export { ApiKeyGuard } from "./api-key-guard";
export { SubuserGate } from "./subuser-gate";

/** The guard of one API key. Callers go through these accessors, never raw namespace ids. */
export function apiKeyGuard(env: Cloudflare.Env, keyId: string): DurableObjectStub<ApiKeyGuard> {
  return env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(keyId));
}

/** The gate of one sub-user, addressed by its gateway name (what the gateway knows). */
export function subuserGate(env: Cloudflare.Env, name: string): DurableObjectStub<SubuserGate> {
  return env.SUBUSER_GATE.get(env.SUBUSER_GATE.idFromName(name));
}
