/** The queues this worker consumes, by the role each one's name ends in. */
const QUEUE_KINDS = ["usage", "report-runs", "webhooks"] as const;
/** The accounts' usage shards: `…-usage-accounts-<n>` (src/domain/traffic/usage-shards.ts). */
const USAGE_SHARD = /(^|-)usage-accounts-\d+$/;
export type QueueKind = (typeof QUEUE_KINDS)[number] | "usage-accounts";

/**
 * A queue's role from its name: the role itself, or a name ending in `-<role>` (`proxy-account-api-usage`,
 * `proxy-account-api-staging-usage`), so that every environment names its own queues in one account
 * (wrangler.toml). A name ending otherwise (a dead-letter queue, a renamed binding) has no role.
 */
export function queueKind(name: string): QueueKind | null {
  if (USAGE_SHARD.test(name)) return "usage-accounts";
  return QUEUE_KINDS.find((kind) => name === kind || name.endsWith(`-${kind}`)) ?? null;
}
