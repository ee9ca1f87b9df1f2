import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decimal } from "../../src/platform/fields";
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

describe("decimal(): one rule for money and quantities", () => {
  const cents = decimal({ unit: 0.01, min: 0.01, max: 1_000_000 });
  const megabytes = decimal({ unit: 0.001, min: 0.001, max: 1_000_000 });

  it.each([0.01, 0.07, 0.1, 1.1, 19.99, 123456.78, 1_000_000])("%s is a whole number of cents", (amount) => {
    expect(cents.safeParse(amount).success).toBe(true);
  });

  it.each([0, 5e-324, 1e-308, 0.001, 0.005, 1.005, 1_000_000.01, Number.NaN])("%s is refused in cents", (amount) => {
    expect(cents.safeParse(amount).success).toBe(false);
  });

  it("the same helper bounds GB at 1 MB steps", () => {
    expect(megabytes.safeParse(0.001).success).toBe(true);
    expect(megabytes.safeParse(123.456).success).toBe(true);
    expect(megabytes.safeParse(0.0005).success).toBe(false);
    expect(megabytes.safeParse(1e-308).success).toBe(false);
  });
});
