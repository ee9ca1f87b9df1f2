import type { GuardConfig } from "../../durable-objects/api-key-guard/contract";
import { RequestTailClient } from "../../durable-objects/request-tail";
import { type KeyScopes, scopeAllows } from "../../vocabulary";
import type { DomainContext } from "../context";

/**
 * Tells the objects holding channels an API key opened (the account's live tails) what the key is now: revoked,
 * its expiry, its accepted tokens, whether it still reads each product's traffic and each sub-user's. The channels it no longer covers
 * close at once, the others at its new deadlines.
 */
export function reviewKeyChannels(ctx: DomainContext, keyId: string, config: GuardConfig): Promise<void> {
  return new RequestTailClient(ctx.env, config.accountId).reviewKey(keyId, {
    revoked: config.revoked,
    expiresAt: config.expiresAt ?? null,
    tokens: config.tokens ?? [],
    covers: {
      products: config.products,
      area: scopeAllows((config.scopes ?? null) as KeyScopes | null, "traffic", "read"),
      subuserIds: config.subuserIds ?? null,
    },
  });
}
