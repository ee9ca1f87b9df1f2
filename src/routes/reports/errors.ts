import type { ErrorCode } from "../../platform/errors";

/** Every report route: the plan gate (checked before the body, so a lower plan learns nothing else). */
export const REPORT_ERRORS: ErrorCode[] = ["feature_not_in_plan"];
/** Creating or changing a definition. */
export const REPORT_WRITE_ERRORS: ErrorCode[] = ["invalid_cron", "destination_unreachable"];
