import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldProblems, invalidRequest } from "../../src/platform/validation";

describe("validation problems", () => {
  it("name every field, including unknown ones, and the message names the first", () => {
    const schema = z.strictObject({ a: z.number(), nested: z.object({ b: z.string() }) });
    const result = schema.safeParse({ a: "x", nested: { b: 1 }, extra: true });
    expect(result.success).toBe(false);
    if (result.success) return;
    const details = fieldProblems(result.error, "json");
    expect(details.map((d) => d.field).sort()).toEqual(["a", "extra", "nested.b"]);
    const error = invalidRequest(details);
    expect(error.code).toBe("invalid_request");
    expect(error.status).toBe(422);
    expect(error.message).toMatch(/^(a|extra|nested\.b): .*\(and 2 more problems\)$/);
  });
});
