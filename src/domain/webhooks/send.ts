import { now, SECOND } from "../../platform/clock";
import { webhookHeaders } from "../../platform/webhook-signature";
import { parseRetryAfter } from "./schedule";

/** An attempt that gets no answer in this time has failed (Standard Webhooks recommends 15-30 s). */
export const DELIVERY_TIMEOUT_MS = 15 * SECOND;
const USER_AGENT = "ProxyAccountAPI-Webhooks/1.0";

export interface SendOutcome {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** A 2xx answer. */
  ok: boolean;
  /** 410 Gone: the receiver asks never to be called again. */
  gone: boolean;
  retryAfterMs: number | null;
}

/**
 * One signed POST of `body` to `url`: `webhook-id` is the event id (stable across retries, the receiver's
 * idempotency key) and `webhook-timestamp` this attempt's time. Redirects are not followed (a 3xx is a failure),
 * the answer's body is never read, and no error escapes: the outcome says what happened.
 */
export async function sendSigned(
  url: string,
  secrets: string[],
  message: { id: string; body: string },
): Promise<SendOutcome> {
  const startedAt = now();
  const headers = await webhookHeaders(secrets, { id: message.id, timestamp: startedAt, body: message.body });
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...headers },
      body: message.body,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await response.body?.cancel();
    const ok = response.status >= 200 && response.status < 300;
    return {
      statusCode: response.status,
      durationMs: now() - startedAt,
      error: ok ? null : failureOf(response.status),
      ok,
      gone: response.status === 410,
      retryAfterMs: ok ? null : parseRetryAfter(response.headers.get("Retry-After"), now()),
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return {
      statusCode: null,
      durationMs: now() - startedAt,
      error: timedOut ? `no answer within ${DELIVERY_TIMEOUT_MS / SECOND} s` : "the connection failed",
      ok: false,
      gone: false,
      retryAfterMs: null,
    };
  }
}

function failureOf(status: number): string {
  if (status >= 300 && status < 400) return `redirect (${status}) not followed: use the final URL`;
  if (status === 410) return "410 Gone: the endpoint was disabled";
  return `the endpoint answered ${status}`;
}
