import { describe, expect, it } from "vitest";
import { LOGGED_SAMPLE } from "../../src/durable-objects/traffic-store/arrival-rows";
import {
  CELL,
  type Cell,
  type CellRow,
  type ClientSource,
  cellOf,
  cellRow,
  requestSampleFields,
  SAMPLE,
  type SampleCandidate,
  SOURCE,
  sampleOf,
  sampleRow,
  sourceRow,
} from "../../src/durable-objects/traffic-store/contract";
import {
  addCellsToMarginals,
  boundDomains,
  DOMAIN_SUMS,
  type DomainSums,
  MARGINAL,
  MINUTE_TOTAL,
  metricsOf,
  minuteTotals,
  sumCells,
} from "../../src/durable-objects/traffic-store/summary";

const MINUTE = 60_000;

describe("the store's row arithmetic (pure)", () => {
  it("bounds each bucket and product to the 100 heaviest domains plus (other), with the sums unchanged", () => {
    const rows: DomainSums[] = [
      ...Array.from({ length: 130 }, (_, i): DomainSums => [0, "residential", `site${i}.com`, 1000 + i, 1, 1, 0]),
      [0, "mobile", "only.com", 5, 0, 1, 0],
      [MINUTE, "residential", "later.com", 7, 0, 1, 0],
    ];
    const { minute, product, domain, bytesIn, bytesOut, requests } = DOMAIN_SUMS;
    const bounded = boundDomains(rows);
    const residential = bounded.filter((row) => row[minute] === 0 && row[product] === "residential");
    expect(residential.filter((row) => row[domain] !== "(other)")).toHaveLength(100);
    expect(residential.find((row) => row[domain] === "site29.com")).toBeUndefined();
    expect(residential.find((row) => row[domain] === "site129.com")).toBeDefined();
    const other = residential.find((row) => row[domain] === "(other)") as DomainSums;
    expect(other[requests]).toBe(30);
    const total = (list: DomainSums[]) => list.reduce((sum, row) => sum + row[bytesIn] + row[bytesOut], 0);
    expect(total(bounded)).toBe(total(rows));
    expect(bounded.filter((row) => row[product] === "mobile")).toEqual([[0, "mobile", "only.com", 5, 0, 1, 0]]);
    // Bytes once in (other) stay there when the bucket is bounded again with more of that domain.
    const again = boundDomains([...bounded, [0, "residential", "site0.com", 1, 0, 1, 0]]);
    expect(again.find((row) => row[domain] === "(other)")?.[requests]).toBe(31);
    expect(total(again)).toBe(total(rows) + 1);
  });

  it("sums cells per key and bucket, per-minute totals and marginals add exactly", () => {
    const cell = (minute: number, subuser: string, region: string, bytes: number): CellRow => [
      minute,
      "residential",
      subuser,
      region,
      7922,
      "",
      "",
      "",
      bytes,
      1,
      1,
      0,
    ];
    const cells = [
      cell(0, "sub_a", "us", 10),
      cell(0, "sub_a", "us", 5),
      cell(MINUTE, "sub_a", "us", 1),
      cell(0, "sub_b", "de", 2),
    ];
    expect(sumCells(cells)).toHaveLength(3);
    // Cells from before statuses were kept (12 fields) are summed as of unknown status and error code.
    expect(sumCells(cells, () => 0)).toEqual([
      [0, "residential", "sub_a", "us", 7922, "", "", "", 16, 3, 3, 0, null, null],
      [0, "residential", "sub_b", "de", 7922, "", "", "", 2, 1, 1, 0, null, null],
    ]);
    expect(minuteTotals(cells)).toEqual([
      [0, "residential", 17, 3, 3, 0],
      [MINUTE, "residential", 1, 1, 1, 0],
    ]);
    const marginals = addCellsToMarginals({}, cells);
    expect(marginals.residential?.subuser).toEqual({ sub_a: [16, 3, 3, 0, MINUTE], sub_b: [2, 1, 1, 0, 0] });
    expect(marginals.residential?.region).toEqual({ us: [16, 3, 3, 0, MINUTE], de: [2, 1, 1, 0, 0] });
    expect(marginals.residential?.status).toBeUndefined();
  });

  it("keeps status and error code as dimensions: cells split by them, marginals per status and per code of failed requests only", () => {
    const cell = (status: number | null, code: string | null, bytes: number): CellRow => [
      0,
      "residential",
      "sub_a",
      "us",
      7922,
      "",
      "",
      "",
      bytes,
      1,
      1,
      code === null ? 0 : 1,
      status,
      code,
    ];
    const cells = [
      cell(200, null, 10),
      cell(200, null, 5),
      cell(502, "upstream-timeout", 0),
      cell(503, "rps-limit", 0),
      cell(502, "upstream-timeout", 0),
      cell(null, null, 7),
    ];
    expect(sumCells(cells).map((row) => [row[CELL.status], row[CELL.errorCode], row[CELL.requests]])).toEqual([
      [200, null, 2],
      [502, "upstream-timeout", 2],
      [503, "rps-limit", 1],
      [null, null, 1],
    ]);
    const marginals = addCellsToMarginals({}, cells).residential;
    expect(marginals?.status).toEqual({ 200: [15, 2, 2, 0, 0], 502: [0, 2, 2, 2, 0], 503: [0, 1, 1, 1, 0] });
    expect(marginals?.error_code).toEqual({ "upstream-timeout": [0, 2, 2, 2, 0], "rps-limit": [0, 1, 1, 1, 0] });
  });

  it("reads a row from before statuses were kept as a cell of unknown status", () => {
    const old = [0, "residential", "sub_a", "us", 1, "", "", "", 1, 2, 3, 0] as CellRow;
    expect(cellOf(old)).toMatchObject({ status: null, errorCode: null, requests: 3 });
  });

  it("names every column where the rows put it (each value distinct, so a wrong index shows)", () => {
    const cell: Cell = {
      minute: 1,
      product: "isp",
      subuserId: "sub_a",
      region: "us",
      asn: 2,
      tag: "tag",
      carrier: "carrier",
      ip: "192.0.2.1",
      bytesIn: 3,
      bytesOut: 4,
      requests: 5,
      errors: 6,
      status: 502,
      errorCode: "upstream-timeout",
    };
    const row = cellRow(cell);
    for (const [name, at] of Object.entries(CELL)) expect(row[at], name).toBe(cell[name as keyof Cell]);
    const metrics = { bytesIn: 3, bytesOut: 4, requests: 5, errors: 6 };
    const [total] = minuteTotals([row]);
    expect([total?.[MINUTE_TOTAL.minute], total?.[MINUTE_TOTAL.product]]).toEqual([1, "isp"]);
    expect(metricsOf(total as ArrayLike<unknown>, MINUTE_TOTAL.bytesIn)).toEqual(metrics);
    const marginal = addCellsToMarginals({}, [row]).isp?.subuser?.sub_a;
    expect(marginal?.[MARGINAL.latestMinute]).toBe(1);
    expect(metricsOf(marginal as ArrayLike<unknown>, MARGINAL.bytesIn)).toEqual(metrics);

    const source: ClientSource = {
      subuserId: "sub_a",
      block: "192.0.2.0/24",
      firstSeen: 1,
      lastSeen: 2,
      requests: 3,
      bytes: 4,
    };
    const sourceFields = sourceRow(source);
    for (const [name, at] of Object.entries(SOURCE)) {
      expect(sourceFields[at], name).toBe(source[name as keyof ClientSource]);
    }

    const sample: SampleCandidate = {
      requestId: "req_1",
      ts: 1,
      product: "mobile",
      subuserId: "sub_a",
      method: "GET",
      targetHost: "example.com",
      status: 200,
      bytes: 2,
      exitIp: "192.0.2.9",
      exitGeo: "us/ca",
      exitAsn: 3,
      tag: "tag",
      weight: 4,
    };
    const sampleFields = sampleRow(sample);
    for (const [name, at] of Object.entries(SAMPLE)) {
      expect(sampleFields[at], name).toBe(sample[name as keyof SampleCandidate]);
    }
    expect(sampleOf(sampleFields)).toEqual(sample);
    expect(LOGGED_SAMPLE.keptBelow).toBe(requestSampleFields(sample).length);
  });
});
