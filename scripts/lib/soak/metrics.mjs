// What the soak measures while it runs: every call's route, status and latency (API routes by template, proxied
// requests by kind), the 5xx answers with what became of their retries, the fault windows that may explain them,
// and the worker's heap over time. `summarize` turns them into the tables and the goals' figures.
import { percentile } from "../../../bench/http.mjs";

export const WINDOW_MS = 5 * 60_000;

export function createMetrics({ maxRequests }) {
  const calls = [];
  const failures = [];
  const faultWindows = [];
  const heap = [];
  let loadStart = null;
  let loadEnd = null;
  return {
    calls,
    failures,
    faultWindows,
    heap,
    startLoad: () => {
      loadStart = Date.now();
    },
    endLoad: () => {
      loadEnd = Date.now();
    },
    get loadStart() {
      return loadStart;
    },
    get loadEnd() {
      return loadEnd;
    },
    /** Whether the request cap is reached (every API call and proxied request counts). */
    capped: () => calls.length >= maxRequests,
    /** One answer (or `status: "network"`): `kind` is `api` or `proxy`. */
    record(kind, route, status, ms, at = Date.now()) {
      if (loadStart === null || loadEnd !== null) return;
      calls.push({ kind, route, status, ms, at });
    },
    /** A 5xx (or a failed connection) answered at `at`; `retried` says whether a retry of it later succeeded. */
    failure(entry) {
      if (loadStart !== null && loadEnd === null) failures.push(entry);
    },
    /** A fault's span of effect (`node`: the node killed, and when it was back): 5xx inside it are explained by it. */
    faultWindow(kind, from, to, node = null) {
      faultWindows.push({ kind, from, to, ...node });
    },
    heapSample(sample) {
      heap.push(sample);
    },
  };
}

/** The figures of a run: statuses, latency per route per window, the first and last 5 minutes, the heap. */
export function summarize(metrics) {
  const { calls, loadStart, loadEnd } = metrics;
  const statuses = {};
  for (const call of calls) {
    statuses[call.kind] ??= {};
    statuses[call.kind][call.status] = (statuses[call.kind][call.status] ?? 0) + 1;
  }
  const windows = Math.max(1, Math.ceil((loadEnd - loadStart) / WINDOW_MS));
  const routes = new Map();
  for (const call of calls) {
    const key = `${call.kind === "proxy" ? "proxy " : ""}${call.route}`;
    const entry = routes.get(key) ?? { kind: call.kind, route: key, all: [], byWindow: [] };
    const window = Math.min(windows - 1, Math.floor((call.at - loadStart) / WINDOW_MS));
    entry.byWindow[window] ??= [];
    entry.byWindow[window].push(call.ms);
    entry.all.push(call);
    routes.set(key, entry);
  }
  const stats = (values) =>
    values.length === 0
      ? { n: 0 }
      : { n: values.length, p50: round(percentile(values, 50)), p99: round(percentile(values, 99)) };
  const firstEnd = loadStart + WINDOW_MS;
  const lastStart = loadEnd - WINDOW_MS;
  const latency = [...routes.values()]
    .sort((a, b) => a.route.localeCompare(b.route))
    .map((entry) => {
      const first = stats(entry.all.filter((call) => call.at < firstEnd).map((call) => call.ms));
      const last = stats(entry.all.filter((call) => call.at >= lastStart).map((call) => call.ms));
      return {
        route: entry.route,
        kind: entry.kind,
        windows: Array.from({ length: windows }, (_, i) => stats(entry.byWindow[i] ?? [])),
        first,
        last,
      };
    });
  return { statuses, windows, latency };
}

/**
 * The heap's growth from `fromMs` into the load: the median of the first three samples taken then against the
 * median of the last three (samples are taken after a full collection).
 */
export function heapGrowth(heap, loadStart, fromMs) {
  const after = heap.filter((sample) => sample.at >= loadStart + fromMs);
  if (after.length < 2) return null;
  const median = (samples) => {
    const sorted = samples.map((sample) => sample.used).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const baseline = median(after.slice(0, 3));
  const final = median(after.slice(-3));
  return { baseline, final, growth: final / baseline - 1 };
}

const round = (ms) => Math.round(ms * 10) / 10;
