import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/webhooks/attempts";
import { subscribes } from "../../src/domain/webhooks/dispatch";
import {
  MAX_RETRY_AFTER_MS,
  nextAttemptAt,
  parseRetryAfter,
  RETRY_OFFSETS_MS,
} from "../../src/domain/webhooks/schedule";
import { checkWebhookUrl } from "../../src/domain/webhooks/url-policy";
import { DAY, HOUR, MINUTE } from "../../src/platform/clock";
import { firstIdAt } from "../../src/platform/ids";

const production = { allowLocalHttp: false };
const development = { allowLocalHttp: true };

describe("webhook URL policy (SSRF)", () => {
  it.each([
    "https://hooks.example.com/proxy",
    "https://hooks.example.com:8443/a?b=c",
    "https://8.8.8.8/hook",
    "https://[2606:4700:4700::1111]/hook",
  ])("accepts the public https URL %s", (url) => {
    expect(checkWebhookUrl(url, production)).toMatchObject({ ok: true });
  });

  it.each([
    ["http://hooks.example.com/", "must use https"],
    ["ftp://hooks.example.com/", "must use https"],
    ["https://user:pass@hooks.example.com/", "must not carry credentials"],
    ["https://hooks.example.com/#frag", "must not have a fragment"],
    ["not a url", "is not an absolute URL"],
  ])("refuses %s: %s", (url, reason) => {
    expect(checkWebhookUrl(url, production)).toEqual({ ok: false, reason });
  });

  it.each([
    "https://127.0.0.1/",
    "https://127.8.9.1/",
    "https://2130706433/",
    "https://0x7f.1/",
    "https://10.1.2.3/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://100.64.0.1/",
    "https://0.0.0.0/",
    "https://224.0.0.1/",
    "https://[::1]/",
    "https://[fd00::1]/",
    "https://[fe80::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:10.0.0.1]/",
  ])("refuses the non-public address %s", (url) => {
    const verdict = checkWebhookUrl(url, production);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok || verdict.reason).toMatch(/^must not point at a \w+ address$/);
  });

  it.each([
    "https://localhost/",
    "https://api.localhost/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://printer.local/",
    "https://router.home.arpa/",
    "https://intranet/",
  ])("refuses the local or internal host %s", (url) => {
    expect(checkWebhookUrl(url, production).ok).toBe(false);
  });

  it("allows http://127.0.0.1, localhost and [::1] only with the development setting", () => {
    for (const url of ["http://127.0.0.1:8787/hook", "http://localhost:3000/", "http://[::1]:9000/"]) {
      expect(checkWebhookUrl(url, production).ok).toBe(false);
      expect(checkWebhookUrl(url, development)).toMatchObject({ ok: true });
    }
    expect(checkWebhookUrl("http://10.0.0.1/", development).ok).toBe(false);
    expect(checkWebhookUrl("http://hooks.example.com/", development).ok).toBe(false);
  });
});

describe("retry schedule: 3 retries over 24 hours", () => {
  const first = Date.UTC(2026, 10, 1);

  it("retries 5 minutes, 2 hours and 24 hours after the first attempt, then stops", () => {
    expect(RETRY_OFFSETS_MS).toEqual([5 * MINUTE, 2 * HOUR, 24 * HOUR]);
    expect(nextAttemptAt(first, 1, first, null)).toBe(first + 5 * MINUTE);
    expect(nextAttemptAt(first, 2, first + 5 * MINUTE, null)).toBe(first + 2 * HOUR);
    expect(nextAttemptAt(first, 3, first + 2 * HOUR, null)).toBe(first + DAY);
    expect(nextAttemptAt(first, 4, first + DAY, null)).toBeNull();
  });

  it("Retry-After can push a retry later, never earlier, and at most 24 hours past the attempt", () => {
    expect(nextAttemptAt(first, 1, first, 60_000)).toBe(first + 5 * MINUTE);
    expect(nextAttemptAt(first, 1, first, 3 * HOUR)).toBe(first + 3 * HOUR);
    expect(nextAttemptAt(first, 1, first, 9 * DAY)).toBe(first + MAX_RETRY_AFTER_MS);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(parseRetryAfter("120", first)).toBe(120_000);
    expect(parseRetryAfter(new Date(first + 90_000).toUTCString(), first)).toBe(90_000);
    expect(parseRetryAfter("soon", first)).toBeNull();
    expect(parseRetryAfter(null, first)).toBeNull();
  });
});

describe("a delivery's next state after an attempt", () => {
  const at = Date.UTC(2026, 10, 1);
  const fresh = { status: "pending" as const, nextAttemptAt: at, automaticAttempts: 0, firstAttemptAt: null };
  const failed = { ok: false, gone: false, retryAfterMs: null };

  it("a 2xx succeeds and ends the schedule", () => {
    expect(settle(fresh, "automatic", { ...failed, ok: true }, at)).toMatchObject({
      status: "succeeded",
      nextAttemptAt: null,
      automaticAttempts: 1,
    });
  });

  it("a 410 fails for good, whatever retries were left", () => {
    expect(settle(fresh, "automatic", { ...failed, gone: true }, at)).toMatchObject({
      status: "failed",
      nextAttemptAt: null,
    });
  });

  it("an automatic failure schedules the next retry from the first attempt", () => {
    expect(settle(fresh, "automatic", failed, at)).toEqual({
      status: "pending",
      nextAttemptAt: at + 5 * MINUTE,
      automaticAttempts: 1,
      firstAttemptAt: at,
    });
  });

  it("a manual failure keeps a pending schedule as it was, and leaves a finished delivery failed", () => {
    const scheduled = { ...fresh, nextAttemptAt: at + HOUR, automaticAttempts: 1, firstAttemptAt: at };
    expect(settle(scheduled, "manual", failed, at + MINUTE)).toEqual({ ...scheduled, status: "pending" });
    expect(settle({ ...scheduled, status: "succeeded" }, "manual", failed, at)).toMatchObject({ status: "failed" });
    expect(settle({ ...fresh, nextAttemptAt: null }, "test", failed, at)).toMatchObject({ status: "failed" });
  });
});

describe("subscriptions", () => {
  it("an endpoint gets the types it lists, or every type with *", () => {
    expect(subscribes(["order.completed"], "order.completed")).toBe(true);
    expect(subscribes(["order.completed"], "traffic.threshold")).toBe(false);
    expect(subscribes(["*"], "report_run.failed")).toBe(true);
  });
});

describe("time boundaries of ids (delivery retention)", () => {
  it("firstIdAt(t) sorts after every id made before t and not after any id made at t", () => {
    const t = Date.UTC(2026, 9, 1);
    const boundary = firstIdAt("webhookDelivery", t);
    expect(boundary).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(`whd_${ulid(t - 1)}` < boundary).toBe(true);
    expect(`whd_${ulid(t)}` >= boundary).toBe(true);
  });
});
