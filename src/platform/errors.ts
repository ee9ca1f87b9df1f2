import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one catalogue of error codes. Every error the API returns is one of these,
 * with exactly this status. The OpenAPI error responses are generated from it too.
 */
export const errorCatalogue = {
  // Platform
  invalid_json: { status: 400, message: "The request body is not valid JSON." },
  unauthorized: { status: 401, message: "A valid API key is required: send `Authorization: Bearer <API_KEY>`." },
  feature_not_in_plan: { status: 403, message: "This feature is not included in the account's plan." },
  mfa_required: { status: 403, message: "This action requires a valid MFA code in the X-MFA-Code header." },
  subuser_scope_mismatch: { status: 403, message: "The API key's product scope does not cover this sub-user." },
  not_found: { status: 404, message: "The requested resource does not exist." },
  method_not_allowed: { status: 405, message: "The method is not allowed on this resource." },
  version_sunset: {
    status: 410,
    message: "This API version is past its sunset date and no longer answers: migrate to the version its guide names.",
  },
  payload_too_large: { status: 413, message: "The request body is too large." },
  idempotency_key_in_use: {
    status: 409,
    message: "A request with this Idempotency-Key is still being processed; retry later.",
  },
  invalid_request: { status: 422, message: "The request is invalid." },
  idempotency_key_reused: {
    status: 422,
    message: "This Idempotency-Key was already used with a different request.",
  },
  rate_limited: { status: 429, message: "API rate limit exceeded; retry after the time in Retry-After." },
  internal_error: { status: 500, message: "An internal error occurred. Quote the request_id when contacting support." },

  // Spec §7
  invalid_cron: { status: 422, message: "The schedule is not a valid 5-field cron expression." },
  destination_unreachable: { status: 422, message: "The webhook destination failed the pre-flight check." },
  downgrade_below_usage: { status: 409, message: "Cannot downgrade below the usage of the current period." },
  already_subscribed: { status: 409, message: "A subscription already exists for this product and plan." },
  unknown_plan: { status: 422, message: "The plan tier does not exist for this product." },
  insufficient_balance: { status: 409, message: "The balance cannot cover this order." },
  kyc_required: { status: 409, message: "The account is under risk review; complete KYC to continue." },
  insufficient_inventory: { status: 422, message: "Not enough IPs are available in the requested geo or ASN." },
  quantity_out_of_range: { status: 422, message: "ISP quantity must be between 5 and 5000." },
  label_taken: { status: 409, message: "The label is used by another sub-user." },
  over_plan_limit: { status: 422, message: "The value is above the plan's limit." },
  subuser_not_found: { status: 404, message: "No sub-user with this id exists." },
  already_whitelisted: { status: 409, message: "This IP or CIDR is already on this whitelist." },
  invalid_cidr: { status: 422, message: "IPv4 blocks may be at most /24 and IPv6 blocks at most /64." },
  over_limit: { status: 422, message: "This whitelist scope already holds the maximum of 50 entries." },
  email_in_use: { status: 409, message: "This email address is already on file." },
  invalid_billing_address: { status: 422, message: "The billing address failed tax-jurisdiction validation." },
  session_not_found: { status: 404, message: "The session expired or never existed." },
  range_too_wide: { status: 422, message: "The range from..to may span at most 90 days." },
  invalid_group_by: { status: 422, message: "Unknown group_by value." },

  // Commerce (where the spec shows no code)
  batch_not_active: { status: 409, message: "The ISP batch is not in a state that allows this." },
  batch_changed: { status: 409, message: "The ISP batch changed while this request ran; retry it." },
  refresh_already_used: { status: 409, message: "The batch was already refreshed in this billing period." },
  subscription_not_active: { status: 409, message: "The subscription is not in a state that allows this." },

  // Proxy test tool (where the spec shows no code)
  proxy_test_not_found: { status: 404, message: "No proxy test with this id exists in the last 24 hours." },

  // Reports (where the spec shows no code)
  report_not_found: { status: 404, message: "No report with this id exists." },
  report_run_not_found: { status: 404, message: "No report run with this id exists." },
  download_link_invalid: { status: 403, message: "The download link is not valid: request a fresh one." },
  download_link_expired: {
    status: 410,
    message: "The download link has expired (links are valid for 1 hour): read the run again for a fresh one.",
  },

  // Webhooks (beyond the spec)
  webhook_endpoint_not_found: { status: 404, message: "No webhook endpoint with this id exists." },
  webhook_delivery_not_found: { status: 404, message: "No delivery with this id exists for this webhook endpoint." },
  event_not_found: { status: 404, message: "No event with this id exists in the last 30 days." },
  webhook_url_not_allowed: {
    status: 422,
    message: "The URL must be a public HTTPS URL without credentials (no loopback, private or link-local address).",
  },
  webhook_endpoint_limit: { status: 422, message: "The account already has the maximum of 16 webhook endpoints." },
  delivery_in_progress: { status: 409, message: "An attempt of this delivery is in progress; retry in a minute." },

  // Sandbox (beyond the spec)
  sandbox_key_required: {
    status: 403,
    message: "Test helpers act only in the sandbox: call them with a sandbox (test_) API key.",
  },
  gateway_refused: { status: 409, message: "The gateway would refuse this request; the message says why." },
} as const satisfies Record<string, { status: ContentfulStatusCode; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface FieldProblem {
  field: string;
  message: string;
}

/** The one error type. Throw it anywhere; the app's error handler renders it. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly details?: FieldProblem[];
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message?: string,
    extra: { details?: FieldProblem[]; headers?: Record<string, string> } = {},
  ) {
    super(message ?? errorCatalogue[code].message);
    this.name = "ApiError";
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.details = extra.details;
    this.headers = extra.headers;
  }
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  request_id: string;
  details?: FieldProblem[];
}

export function errorBody(error: ApiError, requestId: string): ErrorBody {
  const body: ErrorBody = { code: error.code, message: error.message, request_id: requestId };
  if (error.details) body.details = error.details;
  return body;
}
