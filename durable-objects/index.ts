import type { ApiKeyGuard } from "./api-key-guard";

export { ApiKeyGuard } from "./api-key-guard";

/** The guard of one API key. Callers go through these accessors, never raw namespace ids. */
export function apiKeyGuard(env: Cloudflare.Env, keyId: string): DurableObjectStub<ApiKeyGuard> {
  return env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(keyId));
}
