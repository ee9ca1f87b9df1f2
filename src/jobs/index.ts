import { domainContext } from "../domain/context";
import { logError, logInfo } from "../platform/logger";
import { completeProvisioning, expireBatches, releaseAfterGrace, warnExpiringBatches } from "./isp-batches";
import { renewSubscriptions } from "./subscriptions";

/**
 * The Cron Trigger's work, every minute. Each step is idempotent: a repeated or overlapping run finds
 * nothing left to do, and charges carry unique keys so no period is charged twice.
 */
export async function runScheduledJobs(env: Cloudflare.Env, scheduledTime: number): Promise<void> {
  const ctx = domainContext(env);
  const steps = [
    ["complete_provisioning", () => completeProvisioning(ctx, scheduledTime)],
    ["renew_subscriptions", () => renewSubscriptions(ctx, scheduledTime)],
    ["expire_batches", () => expireBatches(ctx, scheduledTime)],
    ["release_after_grace", () => releaseAfterGrace(ctx, scheduledTime)],
    ["warn_expiring_batches", () => warnExpiringBatches(ctx, scheduledTime)],
  ] as const;
  for (const [name, step] of steps) {
    try {
      const handled = await step();
      if (typeof handled === "number" && handled > 0) logInfo("job", { job: name, handled });
    } catch (error) {
      // One failing step must not stop the others; the next run retries it.
      logError("job_failed", { job: name }, error);
    }
  }
}
