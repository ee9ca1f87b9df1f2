import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { queueKind } from "../../src/queues/kinds";
import { env } from "../helpers/http";

describe("queue handler", () => {
  it("retries a batch from a queue it has no consumer for, instead of acknowledging and losing it", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const batch = createMessageBatch("usage-renamed", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { settle: "usr_x" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryBatch.retry).toBe(true);
    expect(result.explicitAcks).toEqual([]);
    expect(String(log.mock.calls[0]?.[0])).toContain('"event":"unknown_queue"');
    log.mockRestore();
  });
});

describe("queueKind (each environment names its own queues: the role is the name's ending)", () => {
  it("finds the role of a bare, a production and a staging name", () => {
    for (const prefix of ["", "proxy-account-api-", "proxy-account-api-staging-"]) {
      expect(queueKind(`${prefix}usage`)).toBe("usage");
      expect(queueKind(`${prefix}report-runs`)).toBe("report-runs");
      expect(queueKind(`${prefix}webhooks`)).toBe("webhooks");
    }
  });

  it("gives no role to dead-letter queues, renamed queues or look-alikes", () => {
    for (const name of ["proxy-account-api-usage-dead-letters", "usage-renamed", "myusage", "runs", "webhook"]) {
      expect(queueKind(name), name).toBeNull();
    }
  });
});
