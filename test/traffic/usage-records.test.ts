import { describe, expect, it } from "vitest";
import { plainlyValidBatch, usageBatchSchema } from "../../src/domain/traffic/usage-records";
import { type RecordFields, usageRecord } from "../helpers/usage";

const TOO_LONG = "x".repeat(600);
/** Values that break, or nearly break, each field's rule. */
const PROBES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  999,
  1000,
  4_294_967_295,
  4_294_967_296,
  1_000_000_000_000,
  1_000_000_000_001,
  Number.NaN,
  "",
  "x",
  "X",
  TOO_LONG,
  "line\nbreak",
  "tab\there",
  "del\u007f",
  "é",
  "residential",
  "mobile",
  "isp",
  "req_abc123",
  "req_",
  "req_abc-123",
  "GET",
  "get",
  "203.0.113.5",
  "2001:db8::1",
  "203.0.113.5/24",
  "2001:DB8::0:1",
  "::ffff:203.0.113.5",
  "999.1.1.1",
  "01.2.3.4",
  "1.2.3",
  "....",
  "::g",
  "abc",
  "us/ca/la",
  "us/ca",
  "US/ca/la",
  "us//",
  "scraper",
  "seo_eu-1",
  "Scraper",
  "upstream-timeout",
  "upstream_timeout",
  "2026-11-23T10:00:00Z",
  "2026-11-23T10:00:00.123456Z",
  "2026-11-23T10:00Z",
  "2026-11-23T10:00:00+01:00",
  "2026-11-23T24:00:00Z",
  "2026-02-29T10:00:00Z",
  "2024-02-29T10:00:00Z",
  "2026-04-31T10:00:00Z",
  "0000-02-29T10:00:00Z",
  "2026-11-23",
  [],
  {},
];

function batch(records: unknown[]): unknown {
  return { batch_id: "b-1", records };
}

describe("plainlyValidBatch (the usage route's fast path)", () => {
  it("takes the fast path for a well-formed batch of every product, and returns it unchanged", () => {
    const records = [
      usageRecord("user_alice-type-res-region-us"),
      usageRecord("user_alice-type-mob", { product: "mobile", carrier_name: "T-Mobile", tag: "seo-eu" }),
      usageRecord("user_alice", { product: "isp", dest_ip: "2001:db8::1", error_code: "rps-limit", repinned: true }),
    ];
    const body = batch(records);
    expect(plainlyValidBatch(body)).toBe(body);
    expect(usageBatchSchema.safeParse(body).success).toBe(true);
  });

  it("accepts nothing the schema refuses, and gives what it gives: every field probed with wrong, boundary and malformed values", () => {
    const base = usageRecord("user_alice-type-res-region-us");
    let fastAccepted = 0;
    for (const field of Object.keys(base)) {
      for (const probe of PROBES) {
        const record: RecordFields = { ...base, [field]: probe };
        if (probe === undefined) delete record[field];
        const body = batch([record]);
        const schema = usageBatchSchema.safeParse(structuredClone(body));
        const fast = plainlyValidBatch(body);
        if (fast === null) continue;
        fastAccepted++;
        expect({ field, probe, schema: schema.success ? schema.data : "refused" }).toEqual({
          field,
          probe,
          schema: fast,
        });
      }
    }
    // The probes include valid values for most fields, so the fast path is exercised, not just refusing.
    expect(fastAccepted).toBeGreaterThan(20);
  });

  it("stores addresses as their canonical text (IPv6 in RFC 5952 form, IPv4-mapped as IPv4), and refuses non-addresses", () => {
    const record = usageRecord("user_alice", {
      product: "isp",
      dest_ip: "2001:0DB8::0:1",
      exit_ip: "::ffff:203.0.113.5",
      client_ip: "::FFFF:C633:6417",
    });
    const canonical = { dest_ip: "2001:db8::1", exit_ip: "203.0.113.5", client_ip: "198.51.100.23" };
    expect(plainlyValidBatch(batch([{ ...record }]))).toEqual(batch([{ ...record, ...canonical }]));
    expect(usageBatchSchema.parse(batch([record]))).toEqual(batch([{ ...record, ...canonical }]));
    for (const field of ["dest_ip", "exit_ip", "client_ip"]) {
      for (const text of ["....", "999.1.1.1", "abc", "1.2.3", "::ffff:01.2.3.4"]) {
        const body = batch([{ ...record, [field]: text }]);
        expect(plainlyValidBatch(body)).toBeNull();
        expect(usageBatchSchema.safeParse(body).success).toBe(false);
      }
    }
  });

  it("refuses an unknown field, a missing batch_id, an empty or oversized batch, and a non-object record", () => {
    const record = usageRecord("user_alice-type-res-region-us");
    const refused = [
      batch([{ ...record, extra: 1 }]),
      { records: [record] },
      { batch_id: "b-1", records: [record], extra: true },
      { batch_id: "", records: [record] },
      { batch_id: "x".repeat(65), records: [record] },
      batch([]),
      batch(Array.from({ length: 1001 }, () => record)),
      batch([[record]]),
      batch([null]),
      null,
      [],
    ];
    for (const body of refused) {
      expect(plainlyValidBatch(body)).toBeNull();
      expect(usageBatchSchema.safeParse(body).success).toBe(false);
    }
  });

  it("takes RFC 3339 timestamps with an offset (through the schema), and error codes, methods and cities with _ or -", () => {
    const base = usageRecord("user_alice-type-res-region-us");
    const accepted: RecordFields[] = [
      { ...base, ts: "2026-11-23T10:00:00+01:00" },
      { ...base, ts: "2026-11-23T10:00:00.5-05:30" },
      { ...base, error_code: "upstream_timeout" },
      { ...base, error_code: "tls.handshake-failed" },
      { ...base, method: "M-SEARCH" },
      { ...base, exit_geo: "us/ny/new-york" },
      { ...base, exit_geo: "br/sp/sao_paulo" },
    ];
    for (const record of accepted) expect(usageBatchSchema.safeParse(batch([record])).success).toBe(true);
    const refused: RecordFields[] = [
      { ...base, ts: "2026-11-23T10:00:00+1:00" },
      { ...base, ts: "2026-11-23T10:00:00" },
      { ...base, error_code: "Upstream" },
      { ...base, method: "get" },
      { ...base, exit_geo: "us/ny/New York" },
    ];
    for (const record of refused) expect(usageBatchSchema.safeParse(batch([record])).success).toBe(false);
  });
});
