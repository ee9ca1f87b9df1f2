import type { ErrorCode } from "../../platform/errors";

export const tags = ["Test helpers"];

/** What every test helper can answer beyond the platform's errors: a live key is refused. */
export const helperErrors: ErrorCode[] = ["sandbox_key_required"];
