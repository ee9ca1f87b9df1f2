/** The messages of an error and its causes (drizzle wraps D1's error in "Failed query: …"). */
function messages(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join("\n");
}

/**
 * True when a write failed on a UNIQUE constraint, optionally on a given column
 * (`subusers.label` matches "UNIQUE constraint failed: subusers.account_id, subusers.label").
 */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  const text = messages(error);
  const match = /UNIQUE constraint failed: ([^\n]*)/.exec(text);
  return match !== null && (column === undefined || (match[1] ?? "").includes(column));
}

/** True when a write failed on the named CHECK constraint (`accounts_balance_non_negative`, `batch_assertion_failed`). */
export function isCheckViolation(error: unknown, constraint: string): boolean {
  const text = messages(error);
  return /CHECK constraint failed/.test(text) && text.includes(constraint);
}
