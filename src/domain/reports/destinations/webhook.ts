import { now } from "../../../platform/clock";
import { unseal } from "../../../platform/crypto";
import { ApiError } from "../../../platform/errors";
import { newId } from "../../../platform/ids";
import type { DomainContext } from "../../context";
import { eventTypes } from "../../events";
import { isSandboxAccount } from "../../sandbox/twins";
import { eventBody } from "../../webhooks/event-body";
import { sendSigned } from "../../webhooks/send";
import { checkWebhookUrl } from "../../webhooks/url-policy";
import { runEventId, runPayload } from "../run-payload";
import { type Delivery, DestinationError } from "./types";

/**
 * The `webhook` destination: a Standard Webhooks-signed POST (the destination's `signing_secret`) of the run's
 * `report_run.completed` event — the one envelope webhook endpoints receive (`eventBody`), under the same event id —
 * whose data adds the link and the report's name, never the file. The same URL rules as webhook endpoints (public
 * https only; SSRF) and the same sender (15 s timeout, redirects not followed).
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
  const body = JSON.stringify(
    eventBody(
      {
        id,
        type: eventTypes.webhookTest,
        createdAt: at,
        payload: { message: "Report destination check: answer 2xx to accept report deliveries." },
      },
      livemode,
    ),
  );
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
  const id = runEventId(delivery.run.id);
  const payload = {
    ...runPayload(
      { ...delivery.run, status: "completed" },
      { url: delivery.downloadUrl, expiresAt: delivery.expiresAt },
    ),
    report_name: delivery.report.name,
  };
  const body = JSON.stringify(
    eventBody({ id, type: eventTypes.reportRunCompleted, createdAt: now(), payload }, livemode),
  );
  // The run's event id is the message id: stable across the queue's retries, the receiver's idempotency key.
  const outcome = await sendSigned(delivery.report.destination.url, [secret], { id, body });
  if (!outcome.ok) throw new DestinationError(`webhook: ${outcome.error}`);
}
