import { describe, expect, it } from "vitest";
import { simulatedExitIp, syntheticRecords, type TrafficSpec } from "../../src/domain/sandbox/traffic";
import { usageRecordSchema } from "../../src/domain/traffic/usage-records";

const spec = (overrides: Partial<TrafficSpec> = {}): TrafficSpec => ({
  usernames: ["user_tabc-type-res-region-us", "user_tabc-type-res-region-de"],
  product: "residential",
  requests: 1000,
  from: Date.parse("2026-11-20T00:00:00Z"),
  to: Date.parse("2026-11-20T01:00:00Z"),
  regions: ["us", "de"],
  tags: ["a", "b", "c"],
  errorRate: 0.123,
  bytesPerRequest: 10_001,
  destIps: [],
  ...overrides,
});

describe("synthetic traffic (pure)", () => {
  it("produces exactly `requests` records the gateway contract accepts, timestamps spread evenly over [from, to)", () => {
    const records = syntheticRecords(spec());
    expect(records).toHaveLength(1000);
    for (const record of records) expect(usageRecordSchema.safeParse(record).success).toBe(true);
    const times = records.map((record) => Date.parse(record.ts));
    expect(Math.min(...times)).toBe(spec().from);
    expect(Math.max(...times)).toBeLessThan(spec().to);
    expect(new Set(records.map((record) => record.request_id)).size).toBe(1000);
  });

  it("fails requests at error_rate spread evenly within each region, and keeps bytes in + out = bytes_per_request", () => {
    const records = syntheticRecords(spec());
    const failed = records.filter((record) => record.error_code !== null);
    expect(failed.every((record) => record.status === 502)).toBe(true);
    for (const region of ["us", "de"]) {
      const own = records.filter((record) => record.exit_geo.startsWith(region));
      expect(own.filter((record) => record.error_code).length, region).toBe(61);
      expect(own.slice(0, 250).filter((record) => record.error_code).length, region).toBe(30);
    }
    const oneRegion = syntheticRecords(spec({ regions: ["us"], errorRate: 0.02, requests: 500 }));
    expect(oneRegion.filter((record) => record.error_code).length).toBe(10);
    for (const record of records) expect(record.bytes_in + record.bytes_out).toBe(10_001);
    expect(syntheticRecords(spec({ errorRate: 0 })).some((record) => record.error_code)).toBe(false);
    expect(syntheticRecords(spec({ errorRate: 1 })).every((record) => record.error_code)).toBe(true);
  });

  it("cycles regions, usernames and tags in step, with deterministic TEST-NET-3 exits", () => {
    const records = syntheticRecords(spec());
    for (const [i, record] of records.slice(0, 6).entries()) {
      const region = i % 2 === 0 ? "us" : "de";
      expect(record.exit_geo).toBe(`${region}//`);
      expect(record.username).toContain(`region-${region}`);
      expect(record.tag).toBe(["a", "b", "c"][i % 3]);
      expect(record.exit_ip).toBe(simulatedExitIp(region, i));
    }
    expect(records.every((record) => /^203\.0\.113\.(\d+)$/.test(record.exit_ip))).toBe(true);
    const again = syntheticRecords(spec());
    expect(again.map((record) => [record.exit_ip, record.ts, record.error_code])).toEqual(
      records.map((record) => [record.exit_ip, record.ts, record.error_code]),
    );
  });

  it("addresses ISP batch IPs (the exit is the IP) and pins a given exit (a sticky session's)", () => {
    const isp = syntheticRecords(spec({ product: "isp", destIps: ["198.18.0.1", "198.18.0.2"], requests: 4 }));
    expect(isp.map((record) => record.dest_ip)).toEqual(["198.18.0.1", "198.18.0.2", "198.18.0.1", "198.18.0.2"]);
    expect(isp.map((record) => record.exit_ip)).toEqual(isp.map((record) => record.dest_ip));
    const pinned = syntheticRecords(spec({ exitIps: ["203.0.113.9"], requests: 3 }));
    expect(pinned.map((record) => record.exit_ip)).toEqual(["203.0.113.9", "203.0.113.9", "203.0.113.9"]);
  });
});
