/**
 * The Postman collection's scenario: the order of the requests, the values the examples cannot know (ids captured
 * from earlier responses) and the extra checks; the OpenAPI document gives everything else (`../postman.ts`). Every
 * public operation must be placed exactly once: the build, and a test, fail on a route the scenario does not place.
 *
 * Read only by the collection's build and by tests: nothing here is in the Worker.
 */
import type * as ScriptFunctions from "./script-functions";

/** A script function that takes no argument: what a `before` variable may be set to. */
type BeforeFunction = {
  [Name in keyof typeof ScriptFunctions]: Parameters<(typeof ScriptFunctions)[Name]> extends [] ? Name : never;
}[keyof typeof ScriptFunctions];

/** One request of the scenario; everything but `operationId` is optional. */
export interface Step {
  operationId: string;
  /** The expected status; default: the operation's first documented 2xx. */
  status?: number;
  /** For a `oneOf` request body: the component schema whose example to send. */
  example?: string;
  /** Fields merged over the example body. */
  body?: Record<string, unknown>;
  /** Path parameters; default: the variable of the parameter example's id prefix (`sub_…` → `{{subuser_id}}`). */
  path?: Record<string, string>;
  /** Query parameters; a required one defaults like a path parameter. */
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Request-local variables set before the request: name → the script function whose result it is. */
  before?: { [variable: string]: BeforeFunction };
  /** Collection variables captured from the response: name → dotted path in the body (`details.batch_id`). */
  capture?: Record<string, string>;
  /** Dotted path in the body → expected value; `{{var}}` in a string is resolved at run time. */
  expect?: Record<string, unknown>;
  /** The response is a list (`data`, or the body itself) that must hold an item whose `id` is this variable. */
  listed?: string;
  /**
   * Repeat the request (every 3 s, up to `seconds`) until the body matches `until`; then check it. Past `seconds`,
   * one failed test says what did not happen in time and why that long (`bound`), and the checks are skipped.
   */
  poll?: { until: Record<string, unknown>; seconds: number; bound: string };
  /** Collection variables set to a field of the response whatever its type (`livemode`), for later steps. */
  remember?: Record<string, string>;
  /** A test helper: a live key gets 403 `sandbox_key_required`, a sandbox key the documented success. */
  sandboxOnly?: true;
  /** The live account's alone (its people): a sandbox key gets 403 `live_key_required`, a live key the success. */
  liveOnly?: true;
  /** Checks that need a proxy gateway beside the API: skipped ("no gateway reachable"), not failed, without one. */
  viaGateway?: true;
}

export interface Folder {
  name: string;
  steps: Step[];
}

/** The id prefixes of the document's examples, and the variable each is captured into. */
export const ID_VARIABLES: Record<string, string> = {
  sub: "subuser_id",
  ord: "order_id",
  bat: "batch_id",
  ip: "ip_id",
  sbn: "subscription_id",
  wl: "whitelist_entry_id",
  pxt: "proxy_test_id",
  rep: "report_id",
  run: "run_id",
  inv: "invitation_id",
};

/** Collection variables besides `baseUrl` and `api_key`. */
export const CONSTANTS = {
  /** A well-formed session id that never exists: sessions come only from gateway traffic, not from this API. */
  unknown_session_id: "ses_00000000000000000000000000",
  /** A well-formed traffic spike id that never exists: spikes come only from traffic. */
  unknown_spike_id: "spk_00000000000000000000000000",
  /** Well-formed member and member-session ids that never exist: members join by invitation, mailed. */
  unknown_member_id: "mem_00000000000000000000000000",
  unknown_member_session_id: "msn_00000000000000000000000000",
  unknown_passkey_id: "pky_00000000000000000000000000",
  unknown_oauth_grant_id: "oag_00000000000000000000000000",
};

/** A signed-in member's own operations, called with the collection's API key: 403 `session_required`. */
const SESSION_ONLY = { status: 403, expect: { code: "session_required" } };
const UNKNOWN_MEMBER = {
  status: 404,
  path: { id: "{{unknown_member_id}}" },
  expect: { code: "member_not_found" },
  liveOnly: true,
} as const;

/** Unique per run, so that a second run on the same account does not collide with the first. */
const RUN_LABEL = "postman-{{$timestamp}}";

const SESSION_NOT_FOUND = {
  status: 404,
  path: { id: "{{unknown_session_id}}" },
  expect: { code: "session_not_found" },
};

const WEBHOOK_ENDPOINT = { id: "{{webhook_endpoint_id}}" };

/**
 * The dependency-ordered scenario: create before read, read before update, delete last. It costs one ISP order
 * (5 IPs × 1 month) and one renewal; every resource it creates is deleted or released at the end, and MFA is left
 * off, so it can run again on the same account.
 */
export const SCENARIO: Folder[] = [
  {
    name: "Account and MFA",
    steps: [
      { operationId: "getAccount", capture: { account_id: "id" }, remember: { livemode: "livemode" } },
      { operationId: "updateAccount", expect: { id: "{{account_id}}", company: "Acme Data Ltd" } },
      {
        operationId: "enrollMfa",
        capture: { mfa_secret: "secret", mfa_recovery_code: "recovery_codes.0" },
        expect: { status: "pending_verification" },
      },
      {
        operationId: "verifyMfa",
        before: { mfa_totp: "mfaCode" },
        body: { code: "{{mfa_totp}}" },
        expect: { mfa_enabled: true, mfa_method: "totp" },
      },
      {
        operationId: "disableMfa",
        headers: { "X-MFA-Code": "{{mfa_recovery_code}}" },
        expect: { mfa_enabled: false },
      },
      { operationId: "getSecurityInfo", expect: { mfa_enabled: false, mfa_pending: false } },
    ],
  },
  {
    name: "Sub-users",
    steps: [
      {
        operationId: "createSubuser",
        body: { label: RUN_LABEL, products: ["residential", "isp"] },
        capture: { subuser_id: "id", subuser_label: "label", subuser_name: "name" },
        expect: { status: "active", "products.length": 2 },
      },
      { operationId: "listSubusers", query: { label_contains: "postman" }, listed: "subuser_id" },
      { operationId: "getSubuser", expect: { id: "{{subuser_id}}", label: "{{subuser_label}}" } },
      { operationId: "updateSubuser", expect: { id: "{{subuser_id}}", concurrent_max: 50 } },
      {
        operationId: "rotateSubuserPassword",
        capture: { subuser_password: "password" },
        expect: { id: "{{subuser_id}}" },
      },
      { operationId: "getSubuserProxyList", query: { country: "US", session: "sticky", count: "5" } },
    ],
  },
  {
    name: "Whitelists",
    steps: [
      {
        operationId: "createWhitelistEntry",
        capture: { whitelist_entry_id: "id" },
        expect: { subuser: "{{subuser_id}}", product: "residential", ip: "203.0.113.0/24" },
      },
      { operationId: "listWhitelistEntries", listed: "whitelist_entry_id" },
    ],
  },
  {
    name: "Orders",
    steps: [
      { operationId: "getIspInventory", query: { country: "US" } },
      {
        operationId: "quoteOrder",
        example: "IspOrderCreate",
        body: { quantity: 5, months: 1 },
        expect: { product: "isp", total_usd: 30, orderable: true },
      },
      {
        operationId: "createOrder",
        example: "IspOrderCreate",
        body: { quantity: 5, months: 1 },
        capture: { order_id: "id", batch_id: "details.batch_id" },
        expect: { product: "isp", total_usd: 30, "details.quantity": 5 },
      },
      { operationId: "getOrder", expect: { id: "{{order_id}}", "details.batch_id": "{{batch_id}}" } },
      { operationId: "listOrders", listed: "order_id" },
      { operationId: "getBandwidthBalance", path: { product: "residential" }, expect: { product: "residential" } },
      // A budget without a hard stop, removed at once: the scenario's charges are never refused by it.
      { operationId: "getBudget", expect: { currency: "USD" } },
      {
        operationId: "setBudget",
        body: { amount_usd: 1000, hard_stop: false },
        expect: { amount_usd: 1000, hard_stop: false, "thresholds_percent.length": 3 },
      },
      { operationId: "deleteBudget", expect: { hard_stop: false, "thresholds_percent.length": 0 } },
    ],
  },
  {
    name: "ISP batch",
    steps: [
      {
        operationId: "getIspBatch",
        poll: {
          until: { status: "active" },
          seconds: 300,
          bound: "the API reference: provisioning takes 1–5 minutes in tier-1 countries",
        },
        expect: { quantity: 5 },
      },
      { operationId: "listIspBatches", listed: "batch_id" },
      {
        operationId: "listIspBatchIps",
        query: { format: "json" },
        capture: { ip_id: "0.ip_id" },
        expect: { length: 5 },
      },
      { operationId: "getIspBatchProxyList", query: { format: "csv" } },
      { operationId: "replaceIspIp", expect: { "replaced.ip_id": "{{ip_id}}", free: true, charged_usd: 0 } },
      { operationId: "refreshIspBatch", expect: { id: "{{batch_id}}", refresh_used_this_period: true } },
      { operationId: "rotateIspBatchPassword", expect: { id: "{{batch_id}}" } },
      { operationId: "renewIspBatch", expect: { id: "{{batch_id}}", status: "active" } },
      {
        operationId: "addIspBatchWhitelistEntry",
        capture: { batch_whitelist_entry_id: "id" },
        expect: { batch_id: "{{batch_id}}" },
      },
      { operationId: "listIspBatchWhitelist", listed: "batch_whitelist_entry_id" },
    ],
  },
  {
    name: "Subscriptions",
    steps: [
      {
        operationId: "createSubscription",
        capture: { subscription_id: "id" },
        expect: { product: "isp", batch_id: "{{batch_id}}", status: "active", cycle: "monthly" },
      },
      { operationId: "getSubscription", expect: { id: "{{subscription_id}}" } },
      { operationId: "listSubscriptions", listed: "subscription_id" },
      { operationId: "updateSubscription", expect: { cycle: "monthly", "pending.cycle": "annual" } },
      { operationId: "pauseSubscription", expect: { status: "paused" } },
      { operationId: "cancelSubscription", expect: { status: "cancelling" } },
    ],
  },
  {
    name: "Sessions and traffic",
    steps: [
      { operationId: "listResidentialSessions", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      { operationId: "getResidentialSession", ...SESSION_NOT_FOUND },
      { operationId: "terminateResidentialSession", ...SESSION_NOT_FOUND },
      { operationId: "listMobileSessions", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      { operationId: "getMobileSession", ...SESSION_NOT_FOUND },
      { operationId: "terminateMobileSession", ...SESSION_NOT_FOUND },
      {
        operationId: "getTraffic",
        path: { product: "residential" },
        before: { traffic_from: "dayAgo", traffic_to: "rightNow" },
        query: { from: "{{traffic_from}}", to: "{{traffic_to}}", subuser: "{{subuser_id}}" },
      },
      { operationId: "listRequests", path: { product: "residential" }, query: { subuser: "{{subuser_id}}" } },
      // A WebSocket: a plain request gets the JSON error that says so.
      {
        operationId: "tailRequests",
        path: { product: "residential" },
        status: 426,
        expect: { code: "websocket_required" },
      },
      { operationId: "listSubuserSources", expect: { "data.length": 0 } },
      { operationId: "listTrafficSpikes", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      {
        operationId: "acknowledgeTrafficSpike",
        status: 404,
        path: { id: "{{unknown_spike_id}}" },
        expect: { code: "traffic_spike_not_found" },
      },
    ],
  },
  {
    // A live key tests through the gateway (`npm run dev` runs a local one; its echo target uses no credit); a
    // deployment without a reachable gateway skips the checks. A sandbox key gets the simulated probe.
    name: "Proxy test",
    steps: [
      { operationId: "getGateway", expect: { username_prefix: "user" } },
      {
        operationId: "runProxyTest",
        body: { username: "user_{{subuser_name}}-type-res-region-us", password: "{{subuser_password}}" },
        capture: { proxy_test_id: "id" },
        expect: { auth_ok: true, "parsed.subuser": "{{subuser_id}}", "parsed.region": "us" },
        viaGateway: true,
      },
      { operationId: "listProxyTests", listed: "proxy_test_id" },
      { operationId: "getProxyTest", expect: { id: "{{proxy_test_id}}", auth_ok: true }, viaGateway: true },
    ],
  },
  {
    // A live key gets 403 from each; a sandbox key makes the outside world happen (test/sandbox).
    name: "Test helpers (sandbox keys only)",
    steps: [
      { operationId: "topUpTestBalance", sandboxOnly: true },
      { operationId: "generateTestTraffic", sandboxOnly: true, expect: { subuser: "{{subuser_id}}", requests: 500 } },
      {
        operationId: "startTestSession",
        sandboxOnly: true,
        // A session needs bandwidth: a sandbox key first buys 1 GB with the sandbox's simulated money.
        before: { test_bandwidth: "buyTestBandwidth" },
        expect: { subuser: "{{subuser_id}}" },
      },
      { operationId: "expireTestIspBatch", sandboxOnly: true, expect: { id: "{{batch_id}}" } },
      { operationId: "renewTestSubscription", sandboxOnly: true, expect: { id: "{{subscription_id}}" } },
    ],
  },
  {
    // An on-demand run of today's sub-user inventory, mailed (wrangler dev keeps the mail locally), then polled.
    name: "Reports",
    steps: [
      { operationId: "createReport", capture: { report_id: "id" }, expect: { type: "traffic", format: "csv" } },
      { operationId: "listReports", listed: "report_id" },
      { operationId: "getReport", expect: { id: "{{report_id}}" } },
      { operationId: "updateReport", expect: { id: "{{report_id}}", schedule: null } },
      {
        operationId: "runReport",
        before: { today: "today" },
        body: { from: "{{today}}", to: "{{today}}" },
        capture: { run_id: "run_id" },
        expect: { status: "queued" },
      },
      {
        operationId: "getReportRun",
        poll: {
          until: { status: "completed" },
          seconds: 60,
          bound: "a report of one account's sub-users runs in seconds",
        },
        expect: { run_id: "{{run_id}}", report_id: "{{report_id}}" },
        capture: { download_url: "download_url" },
      },
      {
        operationId: "downloadReportRunFile",
        before: { link_exp: "downloadLinkExp", link_sig: "downloadLinkSig" },
        path: { id: "{{run_id}}" },
        query: { exp: "{{link_exp}}", sig: "{{link_sig}}" },
      },
      { operationId: "deleteReport", expect: { id: "{{report_id}}", deleted: true } },
    ],
  },
  {
    // The example URL cannot be reached from a run, so the test delivery fails: the test still answers 200
    // with the failed attempt, and the retry does the same.
    name: "Webhooks and events",
    steps: [
      {
        operationId: "createWebhookEndpoint",
        capture: { webhook_endpoint_id: "id" },
        expect: { status: "enabled", "events.0": "order.completed" },
      },
      { operationId: "listWebhookEndpoints", listed: "webhook_endpoint_id" },
      { operationId: "getWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { id: "{{webhook_endpoint_id}}" } },
      { operationId: "updateWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { status: "enabled" } },
      { operationId: "rotateWebhookEndpointSecret", path: WEBHOOK_ENDPOINT, expect: { id: "{{webhook_endpoint_id}}" } },
      {
        operationId: "testWebhookEndpoint",
        path: WEBHOOK_ENDPOINT,
        capture: { webhook_delivery_id: "id", webhook_event_id: "event_id" },
        expect: { event_type: "webhook.test", attempt_count: 1 },
      },
      { operationId: "listWebhookDeliveries", path: WEBHOOK_ENDPOINT, listed: "webhook_delivery_id" },
      {
        operationId: "retryWebhookDelivery",
        path: { ...WEBHOOK_ENDPOINT, delivery_id: "{{webhook_delivery_id}}" },
        expect: { id: "{{webhook_delivery_id}}", attempt_count: 2 },
      },
      { operationId: "listEvents", query: { type: "webhook.test" }, listed: "webhook_event_id" },
      { operationId: "getEvent", path: { id: "{{webhook_event_id}}" }, expect: { type: "webhook.test" } },
      { operationId: "deleteWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { deleted: true } },
    ],
  },
  {
    name: "API keys",
    steps: [
      {
        operationId: "createApiKey",
        body: { name: RUN_LABEL, scopes: { billing: "read", traffic: "read" } },
        capture: { api_key_id: "id" },
        expect: { "scopes.billing": "read" },
      },
      { operationId: "listApiKeys", listed: "api_key_id" },
      { operationId: "getCurrentApiKey", expect: { "scopes.api_keys": "write" } },
      { operationId: "getApiKey", path: { id: "{{api_key_id}}" }, expect: { id: "{{api_key_id}}" } },
      {
        operationId: "updateApiKey",
        path: { id: "{{api_key_id}}" },
        body: { name: "read-only exporter" },
        expect: { name: "read-only exporter" },
      },
      {
        operationId: "rotateApiKey",
        path: { id: "{{api_key_id}}" },
        body: { grace_seconds: 0 },
        expect: { id: "{{api_key_id}}", previous_token_expires_at: null },
      },
      { operationId: "deleteApiKey", path: { id: "{{api_key_id}}" }, expect: { deleted: true } },
    ],
  },
  {
    // The people of the (live) account: a sandbox key is answered 403 `live_key_required`. The collection runs with
    // an API key: a person's own sign-in operations answer it 403 `session_required`, and the links that mailed
    // tokens carry are not known to it (410 `link_expired`).
    name: "Members and sign-in",
    steps: [
      { operationId: "listMembers", liveOnly: true },
      { operationId: "getMember", ...UNKNOWN_MEMBER },
      { operationId: "updateMember", ...UNKNOWN_MEMBER },
      { operationId: "deleteMember", ...UNKNOWN_MEMBER },
      {
        operationId: "createInvitation",
        body: { email: "postman-{{$timestamp}}@example.com", role: "viewer" },
        capture: { invitation_id: "id" },
        expect: { status: "pending", role: "viewer" },
        liveOnly: true,
      },
      { operationId: "listInvitations", listed: "invitation_id", liveOnly: true },
      { operationId: "revokeInvitation", expect: { id: "{{invitation_id}}", status: "revoked" }, liveOnly: true },
      { operationId: "acceptInvitation", status: 410, expect: { code: "link_expired" } },
      { operationId: "signIn", status: 401, expect: { code: "invalid_credentials" } },
      { operationId: "createPasskeySignInOptions", expect: { userVerification: "required" } },
      { operationId: "signInWithPasskey", status: 401, expect: { code: "invalid_credentials" } },
      { operationId: "requestPasswordReset", body: { email: "postman-{{$timestamp}}@example.com" } },
      { operationId: "completePasswordReset", status: 410, expect: { code: "link_expired" } },
      { operationId: "getCurrentSession", ...SESSION_ONLY },
      { operationId: "listMemberSessions", ...SESSION_ONLY },
      { operationId: "revokeMemberSession", ...SESSION_ONLY, path: { id: "{{unknown_member_session_id}}" } },
      { operationId: "enrollMemberMfa", ...SESSION_ONLY },
      { operationId: "verifyMemberMfa", ...SESSION_ONLY },
      { operationId: "disableMemberMfa", ...SESSION_ONLY },
      { operationId: "listPasskeys", ...SESSION_ONLY },
      { operationId: "createPasskeyOptions", ...SESSION_ONLY },
      { operationId: "addPasskey", ...SESSION_ONLY },
      { operationId: "removePasskey", ...SESSION_ONLY, path: { id: "{{unknown_passkey_id}}" } },
      { operationId: "changePassword", ...SESSION_ONLY },
      { operationId: "signOutEverywhere", ...SESSION_ONLY },
      { operationId: "signOut", ...SESSION_ONLY },
      // Connected applications are a signed-in member's: the collection's key gets 403 session_required.
      { operationId: "listOAuthGrants", ...SESSION_ONLY },
      { operationId: "revokeOAuthGrant", ...SESSION_ONLY, path: { id: "{{unknown_oauth_grant_id}}" } },
    ],
  },
  {
    name: "Audit log",
    steps: [
      {
        operationId: "listAuditEvents",
        query: { resource: "{{api_key_id}}" },
        expect: { "data.0.action": "api_key.revoked", "data.0.resource_id": "{{api_key_id}}" },
      },
    ],
  },
  {
    name: "Clean-up",
    steps: [
      {
        operationId: "removeIspBatchWhitelistEntry",
        path: { entry_id: "{{batch_whitelist_entry_id}}" },
        expect: { id: "{{batch_whitelist_entry_id}}", deleted: true },
      },
      { operationId: "releaseIspBatch", expect: { id: "{{batch_id}}", status: "released" } },
      { operationId: "deleteWhitelistEntry", expect: { id: "{{whitelist_entry_id}}", deleted: true } },
      { operationId: "deleteSubuser", expect: { id: "{{subuser_id}}", deleted: true } },
    ],
  },
];
