import { delayBeforeRetry, isRetryableStatus, parseRetryAfter, type RetryPolicy } from "./retry.js";

export type Fetch = (request: Request) => Promise<Response>;

export interface RetryOptions extends RetryPolicy {
  /** How to wait (tests move a fake clock instead). */
  sleep: (ms: number) => Promise<void>;
  /** The jitter's source of randomness, uniform in [0, 1). */
  random: () => number;
}

const WRITE_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"]);

/** What a request is signed with: an API key, or (no key) the browser's session cookie and its CSRF token. */
export interface Credential {
  apiKey?: string;
  csrfToken?: string;
}

/**
 * A `fetch` that signs every request with the API key (or, without one, sends the session cookie and, on a change,
 * the CSRF token), gives every write an `Idempotency-Key` (a UUID, unless the
 * caller set one) that stays the same across its retries — so a retried write takes effect once — and retries
 * 429, 5xx and network failures within the retry policy. The last answer is returned as is, error or not.
 */
export function authenticatedFetch(credential: Credential, send: Fetch, retry: RetryOptions): Fetch {
  return async (request) => {
    const prepared = signed(request, credential);
    for (let attempt = 1; ; attempt++) {
      const outcome = await attemptOnce(send, prepared.clone());
      const wait = prepared.signal.aborted ? null : await waitBeforeRetry(outcome, attempt, retry);
      if (wait === null) return settle(outcome);
      if ("response" in outcome) await outcome.response.body?.cancel();
      await retry.sleep(wait);
    }
  };
}

function signed(request: Request, { apiKey, csrfToken }: Credential): Request {
  const headers = new Headers(request.headers);
  const write = WRITE_METHODS.has(request.method);
  if (write && !headers.has("Idempotency-Key")) headers.set("Idempotency-Key", crypto.randomUUID());
  if (apiKey !== undefined) {
    headers.set("Authorization", `Bearer ${apiKey}`);
    return new Request(request, { headers });
  }
  // No key: a browser's own `credentials` default, `same-origin`, sends the session cookie to the API's own pages.
  if (write && csrfToken !== undefined) headers.set("X-CSRF-Token", csrfToken);
  return new Request(request, { headers });
}

type Outcome = { response: Response } | { failure: unknown };

async function attemptOnce(send: Fetch, request: Request): Promise<Outcome> {
  try {
    return { response: await send(request) };
  } catch (failure) {
    return { failure };
  }
}

async function waitBeforeRetry(outcome: Outcome, attempt: number, retry: RetryOptions): Promise<number | null> {
  if ("failure" in outcome) {
    return isAbort(outcome.failure) ? null : delayBeforeRetry(attempt, null, retry, retry.random);
  }
  const { response } = outcome;
  if (!isRetryableStatus(response.status, await errorCodeOf(response))) return null;
  const retryAfter = parseRetryAfter(response.headers.get("Retry-After"), Date.now());
  return delayBeforeRetry(attempt, retryAfter, retry, retry.random);
}

function settle(outcome: Outcome): Response {
  if ("failure" in outcome) throw outcome.failure;
  return outcome.response;
}

/** The error code of a 409, the one status whose retry depends on it. */
async function errorCodeOf(response: Response): Promise<string | null> {
  if (response.status !== 409) return null;
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return typeof body.code === "string" ? body.code : null;
  } catch {
    return null;
  }
}

function isAbort(failure: unknown): boolean {
  return failure instanceof Error && (failure.name === "AbortError" || failure.name === "TimeoutError");
}
