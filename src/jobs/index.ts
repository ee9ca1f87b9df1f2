import { pruneAuditEvents } from "../domain/audit/audit-log";
import { watchBalances } from "../domain/billing/balance-watch";
import { retellPoolGates } from "../domain/billing/pools";
import { domainContext } from "../domain/context";
import {
  completeProvisioning,
  expireBatches,
  releaseAfterGrace,
  warnExpiringBatches,
} from "../domain/isp/batch-lifecycle";
import { pruneExpiredPasskeyChallenges } from "../domain/members/passkeys";
import { claimDueReports, pruneExpiredRuns, requeueLostRuns } from "../domain/reports/runs";
import { renewDueSubscriptions } from "../domain/subscriptions/renewals";
import { announceExpiredSubusers } from "../domain/subusers/expiry";
import { announceDueSpikeDigests } from "../domain/subusers/traffic-spikes";
import { pruneProxyTests } from "../domain/tools/proxy-tests";
import { finishTerminations } from "../domain/traffic/sessions";
import { dispatchWebhooks } from "../domain/webhooks/dispatch";
import { pruneDeliveries } from "../domain/webhooks/retention";
import { now } from "../platform/clock";
import { logError, logInfo } from "../platform/logger";

/**
 * The Cron Trigger's work, every minute: each step is a domain verb that is idempotent, so a repeated or
 * overlapping run finds nothing left to do and no period is charged twice.
 */
export async function runScheduledJobs(env: Cloudflare.Env, scheduledTime: number): Promise<void> {
  const ctx = domainContext(env);
  const steps = [
    ["complete_provisioning", () => completeProvisioning(ctx, scheduledTime)],
    ["renew_subscriptions", () => renewDueSubscriptions(ctx, scheduledTime)],
    ["expire_batches", () => expireBatches(ctx, scheduledTime)],
    ["release_after_grace", () => releaseAfterGrace(ctx, scheduledTime)],
    ["warn_expiring_batches", () => warnExpiringBatches(ctx, scheduledTime)],
    ["retell_pool_gates", () => retellPoolGates(ctx)],
    ["watch_balances", () => watchBalances(ctx, scheduledTime)],
    ["announce_expired_subusers", () => announceExpiredSubusers(ctx, now())],
    ["announce_spike_digests", () => announceDueSpikeDigests(ctx, now())],
    ["finish_session_terminations", () => finishTerminations(ctx, now())],
    ["prune_proxy_tests", () => pruneProxyTests(ctx, scheduledTime)],
    ["run_due_reports", () => claimDueReports(ctx, scheduledTime)],
    ["requeue_lost_report_runs", () => requeueLostRuns(ctx, scheduledTime)],
    ["prune_report_runs", () => pruneExpiredRuns(ctx, scheduledTime)],
    // Last, so the events the steps above recorded leave in this run: fan-out, and due attempts to the queue. It
    // reads the clock: due times are compared with the queue consumer's clock, not the trigger's schedule.
    ["dispatch_webhooks", () => dispatchWebhooks(ctx, now())],
    ["prune_webhook_deliveries", () => pruneDeliveries(ctx, now())],
    ["prune_audit_events", () => pruneAuditEvents(ctx, now())],
    ["prune_passkey_challenges", () => pruneExpiredPasskeyChallenges(ctx, now())],
  ] as const;
  for (const [name, step] of steps) {
    try {
      const handled = await step();
      if (handled > 0) logInfo("job", { job: name, handled });
    } catch (error) {
      // One failing step must not stop the others; the next run retries it.
      logError("job_failed", { job: name }, error);
    }
  }
}
