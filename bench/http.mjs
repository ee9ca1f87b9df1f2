// Small HTTP and concurrency helpers shared by the benchmark's setup, seeding and checks (not by the measured
// load itself, which autocannon drives).

/** JSON calls to the local worker; a non-2xx answer throws with its body. */
export function apiClient(base) {
  async function call(method, route, { headers = {}, body } = {}) {
    const response = await fetchFresh(`${base}${route}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "Content-Type": "application/json" },
      body: body === undefined || typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : null;
  }
  return {
    base,
    call,
    get: (route, headers) => call("GET", route, { headers }),
    post: (route, headers, body) => call("POST", route, { headers, body }),
  };
}

/** Runs `task` over `items` with at most `limit` in flight; results in the items' order. */
export async function inParallel(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `fetch`, sent again once when it went out on a kept-alive connection the worker had already closed: after a long
 * synchronous stretch (building a million usage records) the client has not yet seen the close, and the request
 * never reached the worker, so sending it again is safe.
 */
export async function fetchFresh(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (error?.cause?.code !== "UND_ERR_SOCKET") throw error;
    return fetch(url, init);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The p-th percentile (0-100) of a list of numbers, nearest rank. */
export function percentile(values, p) {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
