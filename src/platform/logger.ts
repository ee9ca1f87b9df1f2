/**
 * Structured JSON logs, one object a line. Callers pass explicit fields only:
 * never a request, headers or a body, so a secret cannot slip into a log.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export function logInfo(event: string, fields: LogFields): void {
  console.log(JSON.stringify({ level: "info", event, ...fields }));
}

export function logError(event: string, fields: LogFields, error: unknown): void {
  const detail =
    error instanceof Error
      ? { error: error.name, error_message: error.message }
      : { error: error?.constructor?.name ?? typeof error, error_message: (error as { message?: string })?.message };
  console.error(JSON.stringify({ level: "error", event, ...fields, ...detail }));
}
