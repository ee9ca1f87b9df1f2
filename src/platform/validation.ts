import type { output, ZodError, ZodType } from "zod";
import { ApiError, type ErrorCode, type FieldProblem } from "./errors";

type Target = "json" | "query" | "param" | "header" | "cookie" | "form";

/** Turns every zod issue into a field problem: `billing_address.country`, `limit`, `body`. */
export function fieldProblems(error: ZodError, target: Target): FieldProblem[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: base ? `${base}.${key}` : key,
        message: "is not a recognised field",
      }));
    }
    return [{ field: base || (target === "json" ? "body" : target), message: issue.message }];
  });
}

export function invalidRequest(details: FieldProblem[], code: ErrorCode = "invalid_request"): ApiError {
  const [first] = details;
  const more = details.length > 1 ? ` (and ${details.length - 1} more problem${details.length > 2 ? "s" : ""})` : "";
  const message = first ? `${first.field}: ${first.message}${more}` : "The request is invalid.";
  return new ApiError(code, message, { details });
}

/**
 * The validation hook of every router: a failed schema is a 422 `invalid_request` naming each field, unless a
 * field's rule carries its own code from the catalogue (`rangedInteger`).
 */
export function validationHook(
  result: { target: string } & ({ success: true } | { success: false; error: ZodError }),
): void {
  if (result.success) return;
  const ownCode = result.error.issues
    .map((issue) => (issue.code === "custom" ? (issue.params as { code?: ErrorCode } | undefined)?.code : undefined))
    .find((code) => code !== undefined);
  throw invalidRequest(fieldProblems(result.error, result.target as Target), ownCode);
}

/** What the hook does, for a value a route reads itself: the parsed value, or the same 422 the hook throws. */
export function validate<T extends ZodType>(schema: T, value: unknown, target: Target): output<T> {
  const result = schema.safeParse(value);
  validationHook({ target, ...result });
  return result.data as output<T>;
}
