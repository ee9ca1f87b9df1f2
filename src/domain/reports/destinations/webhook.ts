import { now, toIso } from "../../../platform/clock";
import { unseal } from "../../../platform/crypto";
import { ApiError } from "../../../platform/errors";
import { newId } from "../../../platform/ids";
import { presentRun } from "../../../resources/report";
import type { DomainContext } from "../../context";
import { eventTypes } from "../../events";
import { isSandboxAccount } from "../../sandbox/twins";
import { sendSigned } from "../../webhooks/send";
import { checkWebhookUrl } from "../../webhooks/url-policy";
import { type Delivery, DestinationError } from "./types";

/**
 * The `webhook` destination: a Standard Webhooks-signed POST (the destination's `signing_secret`) of a thin
 * `report_run.completed` event carrying the link and the figures, never the file. The same URL rules as webhook
 * endpoints (public https only; SSRF) and the same sender (15 s timeout, redirects not followed). Like every event
 * body, each carries `livemode` (`false` from a sandbox twin), inside the signed bytes.
 */

/** The destination's URL when the webhook URL rules allow it, else 422 naming `destination.url`. */
function checkedUrl(ctx: DomainContext, url: string): string {
  const verdict = checkWebhookUrl(url, { allowLocalHttp: ctx.env.WEBHOOK_ALLOW_LOCAL_HTTP === "true" });
  if (verdict.ok) return verdict.url;
  throw new ApiError("invalid_request", `destination.url: ${verdict.reason}.`, {
    details: [{ field: "destination.url", message: verdict.reason }],
  });
}

/**
 * The check on create and update: a signed `webhook.test` delivery must be answered 2xx, else 422. `livemode` is
 * the caller's (a `test_` key's principal acts on the sandbox twin).
 */
export async function preflightWebhook(
  ctx: DomainContext,
  destination: { url: string; sealedSecret: string },
  livemode: boolean,
) {
  const url = checkedUrl(ctx, destination.url);
  const at = now();
  const id = newId("event", at);
  const body = JSON.stringify({
    type: eventTypes.webhookTest,
    timestamp: toIso(at),
    livemode,
    data: { id, message: "Report destination check: answer 2xx to accept report deliveries." },
  });
  const secret = await unseal(destination.sealedSecret, ctx.env.SEALING_KEY);
  const outcome = await sendSigned(url, [secret], { id, body });
  if (!outcome.ok) throw new ApiError("destination_unreachable", `destination.url: ${outcome.error}.`);
}

export async function deliverToWebhook(ctx: DomainContext, delivery: Delivery): Promise<void> {
  if (delivery.report.destination.type !== "webhook" || !delivery.report.destinationSecretSealed) {
    throw new DestinationError("the webhook destination has no signing secret");
  }
  const secret = await unseal(delivery.report.destinationSecretSealed, ctx.env.SEALING_KEY);
  const livemode = !(await isSandboxAccount(ctx, delivery.report.accountId));
  const body = JSON.stringify({
    type: eventTypes.reportRunCompleted,
    timestamp: toIso(now()),
    livemode,
    data: {
      ...presentRun(
        { ...delivery.run, status: "completed" },
        { url: delivery.downloadUrl, expiresAt: delivery.expiresAt },
      ),
      report_name: delivery.report.name,
    },
  });
  // The run id is the message id: stable across the queue's retries, the receiver's idempotency key.
  const outcome = await sendSigned(delivery.report.destination.url, [secret], { id: delivery.run.id, body });
  if (!outcome.ok) throw new DestinationError(`webhook: ${outcome.error}`);
}
