import { describe, expect, it } from "vitest";
import { BlobShapes } from "../../src/durable-objects/shared/blob-shapes";

/** Three shapes of a counter: a bare number of hits, then named, then with the misses beside them. */
interface V2 {
  hits: number;
  steps: string[];
}
interface V3 extends V2 {
  misses: number;
}

function shapes(ran: string[]) {
  return BlobShapes.first<number>("counter")
    .step((hits): V2 => {
      ran.push("1→2");
      return { hits, steps: ["1→2"] };
    })
    .step((old): V3 => {
      ran.push("2→3");
      return { ...old, misses: 0, steps: [...old.steps, "2→3"] };
    });
}

describe("blob shapes", () => {
  it("applies the steps from the stored version to the latest, in order", () => {
    const ran: string[] = [];
    const counter = shapes(ran);
    expect(counter.version).toBe(3);
    expect(counter.read({ body: "7", version: 1 })).toEqual({ hits: 7, misses: 0, steps: ["1→2", "2→3"] });
    expect(ran).toEqual(["1→2", "2→3"]);

    ran.length = 0;
    expect(counter.read({ body: JSON.stringify({ hits: 7, steps: [] }), version: 2 })).toEqual({
      hits: 7,
      misses: 0,
      steps: ["2→3"],
    });
    expect(ran).toEqual(["2→3"]);
  });

  it("a blob without a version is version 1 (written before versions)", () => {
    const ran: string[] = [];
    const counter = shapes(ran);
    expect(counter.read({ body: "7" })).toEqual(counter.read({ body: "7", version: 1 }));
    expect(counter.read({ body: "7", version: null })).toEqual(counter.read({ body: "7", version: 1 }));
  });

  it("reads the latest version as stored, no step run; writes at the latest version", () => {
    const ran: string[] = [];
    const counter = shapes(ran);
    const value: V3 = { hits: 3, misses: 2, steps: [] };
    const stored = counter.write(value);
    expect(stored).toEqual({ body: JSON.stringify(value), version: 3 });
    expect(counter.read(stored)).toEqual(value);
    expect(ran).toEqual([]);
    // A blob with no step yet: version 1 is the latest.
    expect(BlobShapes.first<number>("bare").write(4)).toEqual({ body: "4", version: 1 });
  });

  it("refuses a blob of a newer version than the code knows, or of no version at all", () => {
    const counter = shapes([]);
    expect(() => counter.read({ body: "{}", version: 4 })).toThrow(
      "counter: stored at shape version 4, newer than this code's 3: refused",
    );
    expect(() => counter.read({ body: "7", version: 0 })).toThrow("counter: stored at shape version 0, not a version");
    expect(() => counter.read({ body: "7", version: 1.5 })).toThrow("not a version");
  });
});
