import { describe, expect, it } from "vitest";
import type { CellRow } from "../../src/durable-objects/traffic-store/contract";
import {
  addCellsToMarginals,
  boundDomains,
  type DomainSums,
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
    const bounded = boundDomains(rows);
    const residential = bounded.filter((row) => row[0] === 0 && row[1] === "residential");
    expect(residential.filter((row) => row[2] !== "(other)")).toHaveLength(100);
    expect(residential.find((row) => row[2] === "site29.com")).toBeUndefined();
    expect(residential.find((row) => row[2] === "site129.com")).toBeDefined();
    const other = residential.find((row) => row[2] === "(other)") as DomainSums;
    expect(other[5]).toBe(30);
    const total = (list: DomainSums[]) => list.reduce((sum, row) => sum + row[3] + row[4], 0);
    expect(total(bounded)).toBe(total(rows));
    expect(bounded.filter((row) => row[1] === "mobile")).toEqual([[0, "mobile", "only.com", 5, 0, 1, 0]]);
    // Bytes once in (other) stay there when the bucket is bounded again with more of that domain.
    const again = boundDomains([...bounded, [0, "residential", "site0.com", 1, 0, 1, 0]]);
    expect(again.find((row) => row[2] === "(other)")?.[5]).toBe(31);
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
    expect(sumCells(cells, () => 0)).toEqual([
      [0, "residential", "sub_a", "us", 7922, "", "", "", 16, 3, 3, 0],
      [0, "residential", "sub_b", "de", 7922, "", "", "", 2, 1, 1, 0],
    ]);
    expect(minuteTotals(cells)).toEqual([
      [0, "residential", 17, 3, 3, 0],
      [MINUTE, "residential", 1, 1, 1, 0],
    ]);
    const marginals = addCellsToMarginals({}, cells);
    expect(marginals.residential?.subuser).toEqual({ sub_a: [16, 3, 3, 0, MINUTE], sub_b: [2, 1, 1, 0, 0] });
    expect(marginals.residential?.region).toEqual({ us: [16, 3, 3, 0, MINUTE], de: [2, 1, 1, 0, 0] });
  });
});
