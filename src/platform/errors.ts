import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one catalogue of error codes. Every error the API returns is one of these,
 * with exactly this status. The OpenAPI error responses are generated from it too.
 */
export const errorCatalogue = {
  // Platform
  invalid_json: {
    status: 400,
    message: "The request body is not valid JSON.",
    fix: "Send a JSON body with `Content-Type: application/json` (gzip with `Content-Encoding: gzip` if compressed).",
  },
  unauthorized: {
    status: 401,
    message: "A valid API key is required: send `Authorization: Bearer <API_KEY>`.",
    fix: "Send `Authorization: Bearer <API_KEY>` with a live or sandbox key that has not been revoked.",
  },
  feature_not_in_plan: {
    status: 403,
    message: "This feature is not included in the account's plan.",
    fix: "Upgrade the account's plan (Pro or above for reports and webhooks), or contact support.",
  },
  mfa_required: {
    status: 403,
    message: "This action requires a valid MFA code in the X-MFA-Code header.",
    fix: "Send the current 6-digit TOTP code (or a recovery code) in the `X-MFA-Code` header.",
  },
  insufficient_scope: {
    status: 403,
    message: "The API key's scopes do not allow this call.",
    fix: "Call with a key whose scopes include the one the message names, or widen this key's scopes (`PATCH /v1/api-keys/{id}` with an `api_keys:write` key).",
  },
  subuser_scope_mismatch: {
    status: 403,
    message: "The API key's product scope does not cover this sub-user.",
    fix: "Use an API key whose product scope covers this product or sub-user, or an unscoped key.",
  },
  subuser_binding: {
    status: 403,
    message: "The API key is bound to sub-users, and this call reaches beyond them.",
    fix: "Use an API key that is not bound to sub-users (`subuser_ids` null), or call only what concerns the key's own sub-users.",
  },
  not_found: {
    status: 404,
    message: "The requested resource does not exist.",
    fix: "Check the id and the path; resources of another account are not visible.",
  },
  method_not_allowed: {
    status: 405,
    message: "The method is not allowed on this resource.",
    fix: "Use one of the methods in the `Allow` header.",
  },
  version_sunset: {
    status: 410,
    message: "This API version is past its sunset date and no longer answers: migrate to the version its guide names.",
    fix: "Move to the API version the migration guide names; this version no longer answers.",
  },
  payload_too_large: {
    status: 413,
    message: "The request body is too large.",
    fix: "Send a smaller body (at most 4 MB, compressed or decoded); split large batches.",
  },
  idempotency_key_in_use: {
    status: 409,
    message: "A request with this Idempotency-Key is still being processed; retry later.",
    fix: "Wait for the first request with this Idempotency-Key to finish, then retry: it will be replayed.",
  },
  invalid_request: {
    status: 422,
    message: "The request is invalid.",
    fix: "Correct the fields listed in `details` (each names the field and what it must be).",
  },
  idempotency_key_reused: {
    status: 422,
    message: "This Idempotency-Key was already used with a different request.",
    fix: "Use a new Idempotency-Key for a different request; reuse a key only to retry the same request.",
  },
  rate_limited: {
    status: 429,
    message: "API rate limit exceeded; retry after the time in Retry-After.",
    fix: "Wait for `Retry-After` seconds; to raise the limit, upgrade the plan or ask support for a higher limit.",
  },
  internal_error: {
    status: 500,
    message: "An internal error occurred. Quote the request_id when contacting support.",
    fix: "Retry with the same Idempotency-Key; if it persists, contact support quoting the request_id.",
  },

  // Spec §7
  invalid_cron: {
    status: 422,
    message: "The schedule is not a valid 5-field cron expression.",
    fix: "Send a 5-field cron expression (minute hour day-of-month month day-of-week), evaluated in UTC.",
  },
  destination_unreachable: {
    status: 422,
    message: "The webhook destination failed the pre-flight check.",
    fix: "Make the destination accept a test delivery (reachable URL, valid credentials), then retry.",
  },
  downgrade_below_usage: {
    status: 409,
    message: "Cannot downgrade below the usage of the current period.",
    fix: "Wait for the next period, or choose a tier that includes at least the GB already used.",
  },
  already_subscribed: {
    status: 409,
    message: "A subscription already exists for this product and plan.",
    fix: "Change the existing subscription (PATCH) instead of creating another.",
  },
  unknown_plan: {
    status: 422,
    message: "The plan tier does not exist for this product.",
    fix: "Choose a tier listed for the product; `enterprise` needs a custom price set by support.",
  },
  insufficient_balance: {
    status: 409,
    message: "The balance cannot cover this order.",
    fix: "Top up the balance, or order less: `POST /v1/orders/quote` shows what an order costs.",
  },
  kyc_required: {
    status: 409,
    message: "The account is under risk review; complete KYC to continue.",
    fix: "Complete KYC verification in the dashboard; orders resume once it is approved.",
  },
  insufficient_inventory: {
    status: 422,
    message: "Not enough IPs are available in the requested geo or ASN.",
    fix: "Order fewer IPs, or another city, country or ASN: `GET /v1/isp/inventory` shows what is available.",
  },
  quantity_out_of_range: {
    status: 422,
    message: "ISP quantity must be between 5 and 5000.",
    fix: "Order between 5 and 5000 IPs per batch.",
  },
  label_taken: {
    status: 409,
    message: "The label is used by another sub-user.",
    fix: "Choose another label, or update the sub-user that has it.",
  },
  over_plan_limit: {
    status: 422,
    message: "The value is above the plan's limit.",
    fix: "Lower the value to the plan's limit, or upgrade the plan.",
  },
  subuser_not_found: {
    status: 404,
    message: "No sub-user with this id exists.",
    fix: "Check the sub-user id (and that it has the product); sub-users of another account are not visible.",
  },
  already_whitelisted: {
    status: 409,
    message: "This IP or CIDR is already on this whitelist.",
    fix: "Nothing to do: the entry exists. Delete it first to change it.",
  },
  invalid_cidr: {
    status: 422,
    message: "IPv4 blocks may be at most /24 and IPv6 blocks at most /64.",
    fix: "Send a single IP, an IPv4 block of /24 or narrower, or an IPv6 block of /64 or narrower.",
  },
  over_limit: {
    status: 422,
    message: "This whitelist scope already holds the maximum of 50 entries.",
    fix: "Remove entries you no longer need; a whitelist scope holds at most 50.",
  },
  email_in_use: { status: 409, message: "This email address is already on file.", fix: "Use another email address." },
  invalid_billing_address: {
    status: 422,
    message: "The billing address failed tax-jurisdiction validation.",
    fix: "Correct the billing address (country, postal code and, where required, state) and the tax id.",
  },
  session_not_found: {
    status: 404,
    message: "The session expired or never existed.",
    fix: "Start a new session with a new session id in the username; expired sessions are kept 24 hours.",
  },
  range_too_wide: {
    status: 422,
    message: "The range from..to may span at most 90 days.",
    fix: "Query at most 90 days at a time, or run a report for longer periods.",
  },
  invalid_group_by: {
    status: 422,
    message: "Unknown group_by value.",
    fix: "Use one of the group_by values listed in the message.",
  },

  // Commerce (where the spec shows no code)
  batch_not_active: {
    status: 409,
    message: "The ISP batch is not in a state that allows this.",
    fix: "Check the batch's status: this action needs an active (or, for renewal, grace) batch.",
  },
  batch_changed: {
    status: 409,
    message: "The ISP batch changed while this request ran; retry it.",
    fix: "Retry the request; it will act on the batch as it is now.",
  },
  refresh_already_used: {
    status: 409,
    message: "The batch was already refreshed in this billing period.",
    fix: "Wait for the next billing period, or replace individual IPs instead.",
  },
  subscription_not_active: {
    status: 409,
    message: "The subscription is not in a state that allows this.",
    fix: "Check the subscription's status: resume a paused one or create a new one.",
  },
  budget_exceeded: {
    status: 409,
    message: "This charge would take the month's spend past the account's budget, whose hard stop is on.",
    fix: "Raise the budget or turn its hard stop off (`PUT /v1/budget`), or wait for the next month (UTC).",
  },

  // Proxy test tool (where the spec shows no code)
  proxy_test_not_found: {
    status: 404,
    message: "No proxy test with this id exists in the last 24 hours.",
    fix: "Run the test again; tests are kept 24 hours.",
  },

  // Reports (where the spec shows no code)
  report_not_found: {
    status: 404,
    message: "No report with this id exists.",
    fix: "Check the report id; deleted reports and reports of another account are not visible.",
  },
  report_run_not_found: {
    status: 404,
    message: "No report run with this id exists.",
    fix: "Check the run id; runs of another account are not visible.",
  },
  download_link_invalid: {
    status: 403,
    message: "The download link is not valid: request a fresh one.",
    fix: "Read the run again (`GET /v1/reports/runs/{id}`) for a fresh link; do not edit the link.",
  },
  download_link_expired: {
    status: 410,
    message: "The download link has expired (links are valid for 1 hour): read the run again for a fresh one.",
    fix: "Read the run again (`GET /v1/reports/runs/{id}`) for a fresh link, valid for 1 hour.",
  },

  // Webhooks (beyond the spec)
  webhook_endpoint_not_found: {
    status: 404,
    message: "No webhook endpoint with this id exists.",
    fix: "Check the endpoint id; endpoints of another account are not visible.",
  },
  webhook_delivery_not_found: {
    status: 404,
    message: "No delivery with this id exists for this webhook endpoint.",
    fix: "Check the delivery id and its endpoint; deliveries are kept 30 days.",
  },
  event_not_found: {
    status: 404,
    message: "No event with this id exists in the last 30 days.",
    fix: "Check the event id; events are kept 30 days.",
  },
  webhook_url_not_allowed: {
    status: 422,
    message: "The URL must be a public HTTPS URL without credentials (no loopback, private or link-local address).",
    fix: "Use a public https:// URL without credentials in it.",
  },
  webhook_endpoint_limit: {
    status: 422,
    message: "The account already has the maximum of 16 webhook endpoints.",
    fix: "Delete an endpoint you no longer need, or subscribe one endpoint to more event types.",
  },
  delivery_in_progress: {
    status: 409,
    message: "An attempt of this delivery is in progress; retry in a minute.",
    fix: "Wait a minute for the attempt in progress to finish, then retry.",
  },

  // API keys (beyond the spec)
  api_key_not_found: {
    status: 404,
    message: "No API key with this id exists.",
    fix: "Check the key id (`GET /v1/api-keys` lists the account's keys); keys of another account are not visible.",
  },
  api_key_limit: {
    status: 422,
    message: "The account already has the maximum of 50 active API keys.",
    fix: "Delete keys you no longer use (`DELETE /v1/api-keys/{id}`).",
  },

  // Sandbox (beyond the spec)
  sandbox_key_required: {
    status: 403,
    message: "Test helpers act only in the sandbox: call them with a sandbox (test_) API key.",
    fix: "Call test helpers with a sandbox (`test_`) API key.",
  },
  gateway_refused: {
    status: 409,
    message: "The gateway would refuse this request; the message says why.",
    fix: "Fix what the message names (credentials, whitelist, limits, balance) and test again.",
  },
  traffic_spike_not_found: {
    status: 404,
    message: "No traffic spike with this id exists.",
    fix: "Check the spike id (`GET /traffic-spikes` lists them); spikes of another account are not visible.",
  },

  // Live tail (beyond the spec)
  websocket_required: {
    status: 426,
    message: "This is a WebSocket endpoint: open it with `Upgrade: websocket`.",
    fix: "Connect with a WebSocket client (`npm run tail -- <key>`, or `new WebSocket(url, ['tail', 'bearer.<key>'])` in a browser).",
  },
  tail_limit: {
    status: 409,
    message: "The account already has the maximum of 5 live tails open.",
    fix: "Close a tail you no longer watch (another console tab or terminal), then connect again.",
  },

  // Gateway node contract (internal)
  node_credential_required: {
    status: 403,
    message: "The node contract takes a node's own credential, not the fleet's shared gateway token.",
    fix: "Issue the node a credential (`POST /internal/admin/gateway-nodes`) and call with it.",
  },
  node_mismatch: {
    status: 403,
    message: "A node credential speaks only for its own node.",
    fix: "Name the node the credential was issued for, or call with that node's own credential.",
  },
  // Members and sessions
  invalid_credentials: {
    status: 401,
    message: "The email or password is not right.",
    fix: "Check the email and password (passwords are case-sensitive), or reset the password from the sign-in page.",
  },
  session_required: {
    status: 403,
    message: "This operation is about a signed-in member's own session: call it signed in, not with an API key.",
    fix: "Sign in with `POST /v1/auth/sign-in` and call it with the session cookie (and `X-CSRF-Token` on changes).",
  },
  csrf_failed: {
    status: 403,
    message:
      "A change made with the session cookie needs the session's CSRF token in X-CSRF-Token, from the API's own origin.",
    fix: "Send the `csrf_token` from the sign-in answer (or `GET /v1/auth/session`) in `X-CSRF-Token`, from a page of the API's own origin.",
  },
  live_key_required: {
    status: 403,
    message: "The account's people belong to the live account: call with a live (live_) API key, or signed in.",
    fix: "Manage members and invitations with a live API key or a member's session; a sandbox key has none.",
  },
  member_not_found: {
    status: 404,
    message: "No member with this id exists.",
    fix: "Check the id with `GET /v1/members`; members of another account are not visible.",
  },
  invitation_not_found: {
    status: 404,
    message: "No invitation with this id exists.",
    fix: "Check the id with `GET /v1/invitations`; invitations of another account are not visible.",
  },
  member_exists: {
    status: 409,
    message: "A member of the account, or a pending invitation, already has this email.",
    fix: "Change the existing member's role with `PATCH /v1/members/{id}`, or revoke the pending invitation first.",
  },
  last_owner: {
    status: 409,
    message: "An account keeps at least one owner.",
    fix: "Make another member an owner first, then change or remove this one.",
  },
  account_required: {
    status: 409,
    message: "This email belongs to members of several accounts: say which account to sign in to.",
    fix: "Send `account` (the account's `usr_…` id) with the sign-in.",
  },
  passkey_not_found: {
    status: 404,
    message: "No passkey of yours has this id.",
    fix: "List your passkeys with `GET /v1/auth/passkeys`.",
  },
  passkey_rejected: {
    status: 400,
    message:
      "The browser's passkey answer did not verify: its challenge is unknown, used or expired, or it was not made here.",
    fix: "Ask for new options (`POST /v1/auth/passkeys/options`) and create the passkey again from a page of the API's own origin.",
  },
  passkey_limit: {
    status: 409,
    message: "A member holds at most 10 passkeys.",
    fix: "Remove a passkey you no longer use (`DELETE /v1/auth/passkeys/{id}`), then add the new one.",
  },
  mail_failed: {
    status: 502,
    message: "The mail could not be sent, so nothing was done.",
    fix: "Check the address, then try again; if it keeps failing, contact support with the request id.",
  },
  link_expired: {
    status: 410,
    message: "This link is unknown, already used, revoked or expired.",
    fix: "Ask for a new invitation (from an owner or admin) or a new password reset; links work once, for a limited time.",
  },
} as const satisfies Record<string, { status: ContentfulStatusCode; message: string; fix: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface FieldProblem {
  field: string;
  message: string;
}

/** The figures of a limit an error met: the limit, where the caller stands, and what raises it. */
export interface LimitFigures {
  limit: number;
  current: number;
  raisedBy: string;
}

/** The one error type. Throw it anywhere; the app's error handler renders it. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly details?: FieldProblem[];
  readonly headers?: Record<string, string>;
  readonly limit?: LimitFigures;

  constructor(
    code: ErrorCode,
    message?: string,
    extra: { details?: FieldProblem[]; headers?: Record<string, string>; limit?: LimitFigures } = {},
  ) {
    super(message ?? errorCatalogue[code].message);
    this.name = "ApiError";
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.details = extra.details;
    this.headers = extra.headers;
    this.limit = extra.limit;
  }
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  request_id: string;
  doc_url: string;
  details?: FieldProblem[];
  limit?: number;
  current?: number;
  limit_raised_by?: string;
}

/** Where the page of error codes is served (offline, from the catalogue), and each code's anchor on it. */
export const ERROR_DOCS_PATH = "/docs/errors";

export function errorDocUrl(origin: string, code: ErrorCode): string {
  return `${origin}${ERROR_DOCS_PATH}#${code}`;
}

export function errorBody(error: ApiError, requestId: string, origin: string): ErrorBody {
  const body: ErrorBody = {
    code: error.code,
    message: error.message,
    request_id: requestId,
    doc_url: errorDocUrl(origin, error.code),
  };
  if (error.details) body.details = error.details;
  if (error.limit) {
    body.limit = error.limit.limit;
    body.current = error.limit.current;
    body.limit_raised_by = error.limit.raisedBy;
  }
  return body;
}
