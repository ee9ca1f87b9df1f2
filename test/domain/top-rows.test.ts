import { describe, expect, it } from "vitest";
import { topRows } from "../../src/domain/traffic/traffic";
import type { TrafficRow } from "../../src/durable-objects/traffic-store/contract";

const row = (key: string, requests: number, bytesIn: number, bytesOut = 0, errors = 0): TrafficRow => ({
  key,
  requests,
  bytesIn,
  bytesOut,
  errors,
});

describe("topRows (pure): a top table of grouped traffic", () => {
  const rows = [row("a", 3, 10), row("b", 5, 1, 1), row("c", 5, 30), row("d", 1, 0, 50, 1)];

  it("orders heaviest first by the metric (bytes: in + out), keeping the key order between equals", () => {
    expect(topRows(rows, "requests").map((r) => r.key)).toEqual(["b", "c", "a", "d"]);
    expect(topRows(rows, "bytes").map((r) => r.key)).toEqual(["d", "c", "a", "b"]);
    expect(topRows(rows, "bytes_in").map((r) => r.key)).toEqual(["c", "a", "b", "d"]);
    expect(topRows(rows, "errors").map((r) => r.key)).toEqual(["d", "a", "b", "c"]);
  });

  it("keeps the first `limit` rows, in the given order without a metric, and never changes its input", () => {
    expect(topRows(rows, "requests", 2).map((r) => r.key)).toEqual(["b", "c"]);
    expect(topRows(rows, undefined, 2).map((r) => r.key)).toEqual(["a", "b"]);
    expect(topRows(rows).map((r) => r.key)).toEqual(["a", "b", "c", "d"]);
  });
});
