import { describe, expect, it } from "vitest";
import { addSessionUsage, copySessionUsage } from "../../src/durable-objects/subuser-gate/contract";
import type { SessionUsage } from "../../src/durable-objects/traffic-store/contract";

function usage(ts: number, fields: Partial<SessionUsage> = {}): SessionUsage {
  return {
    username: "user_alice-type-res-session-s1-sesstime-30",
    product: "residential",
    firstTs: ts,
    lastTs: ts,
    firstExitIp: `198.51.100.${ts % 250}`,
    repinnedExitIp: null,
    bytes: 100,
    requests: 1,
    lastRequests: [
      { requestId: `req_${ts}`, ts, method: "GET", targetHost: "example.com", status: 200, bytes: 100, exitIp: "x" },
    ],
    ...fields,
  };
}

describe("addSessionUsage (summing a session's usage, producer and gate alike)", () => {
  it("sums bytes and requests, and keeps the exit IP of the earliest usage as the pin", () => {
    const total = copySessionUsage(usage(50));
    addSessionUsage(total, usage(20));
    addSessionUsage(total, usage(70));
    expect(total).toMatchObject({ bytes: 300, requests: 3, firstTs: 20, lastTs: 70, firstExitIp: "198.51.100.20" });
  });

  it("moves the pin to the latest repin, whatever order the usage arrives in", () => {
    const total = copySessionUsage(usage(10));
    addSessionUsage(total, usage(40, { repinnedExitIp: "203.0.113.40" }));
    addSessionUsage(total, usage(30, { repinnedExitIp: "203.0.113.30" }));
    expect(total.repinnedExitIp).toBe("203.0.113.40");
    addSessionUsage(total, usage(60, { repinnedExitIp: "203.0.113.60" }));
    expect(total.repinnedExitIp).toBe("203.0.113.60");
  });

  it("keeps the newest 10 requests, newest first (ties by request id), and leaves the original untouched", () => {
    const first = usage(0);
    const total = copySessionUsage(first);
    for (const ts of [5, 12, 3, 12, 8, 1, 14, 9, 2, 11, 7, 13]) addSessionUsage(total, usage(ts));
    expect(total.lastRequests.map((r) => r.ts)).toEqual([14, 13, 12, 12, 11, 9, 8, 7, 5, 3]);
    expect(first.lastRequests).toHaveLength(1);
  });
});
