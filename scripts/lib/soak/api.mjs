// The soak's API client: every call is recorded under its route's template (`GET /v1/subusers/{id}`) with its
// status and latency. Writes carry an Idempotency-Key, so a call answered 5xx (or cut) is sent again, the same key and
// body, until it succeeds (at most `ATTEMPTS` times); each such answer is recorded with whether its retry succeeded.
import { randomUUID } from "node:crypto";
import { fetchFresh, sleep } from "../../../bench/http.mjs";

const ATTEMPTS = 6;

export function measuredApi(base, metrics) {
  /**
   * `template` is the route's path with `{name}` placeholders filled from `params`. Resolves to
   * `{status, body, headers}` (the last attempt's); never throws for an HTTP status.
   */
  async function call(method, template, { params = {}, query, body, token, headers = {}, idempotencyKey } = {}) {
    const path = template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(params[name]));
    const search = query ? `?${new URLSearchParams(query)}` : "";
    const sent = { ...headers };
    if (token) sent.Authorization = `Bearer ${token}`;
    if (body !== undefined) sent["Content-Type"] = "application/json";
    if (method !== "GET") sent["Idempotency-Key"] = idempotencyKey ?? randomUUID();
    const route = `${method} ${template}`;
    const failed = [];
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      let status;
      let answer = null;
      try {
        const response = await fetchFresh(`${base}${path}${search}`, {
          method,
          headers: sent,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        status = response.status;
        answer = { status, body: text && isJson(response) ? JSON.parse(text) : text, headers: response.headers };
      } catch {
        status = "network";
      }
      metrics.record("api", route, status, performance.now() - started);
      const failure = status === "network" || status >= 500;
      if (failure) failed.push({ kind: "api", route, status, at: Date.now(), attempt });
      if (!failure || attempt === ATTEMPTS) {
        for (const entry of failed) metrics.failure({ ...entry, retried: !failure });
        if (answer) return answer;
        throw new Error(`${route}: no answer after ${ATTEMPTS} attempts`);
      }
      await sleep(500 * attempt);
    }
  }
  return { call };
}

function isJson(response) {
  return /^application\/json/.test(response.headers.get("Content-Type") ?? "");
}
