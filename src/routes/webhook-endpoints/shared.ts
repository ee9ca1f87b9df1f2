import type { ErrorCode } from "../../platform/errors";

/** What every webhook endpoint operation can answer besides its own errors: the plan gate and the key's scope. */
export const WEBHOOK_ERRORS = ["feature_not_in_plan", "subuser_scope_mismatch"] as const satisfies ErrorCode[];
/** …and, on an endpoint's own path, an unknown id (or another account's). */
export const ENDPOINT_ERRORS = [...WEBHOOK_ERRORS, "invalid_request", "webhook_endpoint_not_found"] as const;

export const TAG = "Webhooks";
