import type { ErrorCode } from "../../platform/errors";

/**
 * Every report route: the plan gate (checked before the body, so a lower plan learns nothing else), and the key's
 * product scope (reports span every product: a key with a product scope is refused).
 */
export const REPORT_ERRORS: ErrorCode[] = ["feature_not_in_plan", "subuser_scope_mismatch"];
/** Creating or changing a definition. */
export const REPORT_WRITE_ERRORS: ErrorCode[] = ["invalid_cron", "destination_unreachable"];
