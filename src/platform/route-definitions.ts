import { createRoute, type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { KeyAccess, KeyArea } from "../vocabulary";
import { type ErrorCode, errorCatalogue } from "./errors";
import { text } from "./fields";
import {
  MFA_HEADER,
  noStore,
  refuseBoundKeys,
  requireLiveKey,
  requireSandboxKey,
  requireScope,
  requireSession,
} from "./route-middleware";

/**
 * How every operation is declared: one `createRoute` config per operation file, through `apiRoute` (the public
 * `/v1` API) or `internalRoute` (admin and gateway). The builders add what every operation shares, so the
 * OpenAPI document tells the whole truth without each route repeating it: security, the errors every call can
 * meet, the headers sent on every response, `Idempotency-Key` on writes, `X-MFA-Code` on gated actions.
 */

/** One of the error catalogue's codes. */
export const errorCodeSchema = z
  .enum(Object.keys(errorCatalogue) as [ErrorCode, ...ErrorCode[]])
  .openapi({ example: "invalid_request" });

export const errorSchema = z
  .object({
    code: errorCodeSchema,
    message: text(1000).openapi({ example: "label: must match [a-z0-9-]{1,64}." }),
    request_id: z
      .string()
      .max(30)
      .regex(/^req_[0-9A-HJKMNP-TV-Z]{26}$/)
      .openapi({ example: "req_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    doc_url: z.url().max(200).openapi({
      description: "The code's entry on the page of error codes: its cause and how to fix it.",
      example: "https://api.example.com/docs/errors#invalid_request",
    }),
    details: z
      .array(z.object({ field: text(200), message: text(1000) }))
      .max(100)
      .optional()
      .openapi({ description: "Every field problem, on `invalid_request`." }),
    limit: z
      .number()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: "When a limit refused the request: the limit.", example: 50 }),
    current: z
      .number()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: "When a limit refused the request: where the caller stands against it.", example: 50 }),
    limit_raised_by: text(300)
      .optional()
      .openapi({ description: "When a limit refused the request: what raises the limit.", example: "a higher plan" }),
  })
  .openapi("Error");

// ── Response headers (registered once per document as components) ─────────────────────────────────

const responseHeaders = {
  "X-Request-Id": {
    description: "The request's id (`req_…`); quote it when contacting support. A replay carries the original id.",
    schema: { type: "string", pattern: "^req_[0-9A-HJKMNP-TV-Z]{26}$", maxLength: 30 },
  },
  "X-RateLimit-Limit": {
    description: "Requests allowed in the window that is closest to its limit (rolling 60 s or 24 h).",
    schema: { type: "integer", format: "int64", minimum: 0, maximum: 1_000_000_000 },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in that window.",
    schema: { type: "integer", format: "int64", minimum: 0, maximum: 1_000_000_000 },
  },
  "X-RateLimit-Reset": {
    description: "Unix epoch second at which the window's oldest counted request leaves it.",
    schema: { type: "integer", format: "int64", minimum: 0, maximum: 99_999_999_999 },
  },
  "Retry-After": {
    description:
      "Whole seconds until the oldest counted request leaves the window (at most 60, or 86,400 for the day).",
    schema: { type: "integer", format: "int32", minimum: 1, maximum: 86_400 },
  },
  Link: {
    description: 'The next page: `<url>; rel="next"`. Absent on the last page.',
    schema: { type: "string", maxLength: 2048, pattern: '^<[^>]+>; rel="next"$' },
  },
  "Idempotent-Replayed": {
    description: "`true` when this response is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
  "Cache-Control": {
    description: "`no-store`: the response shows a secret, or was made for this request alone; no cache may keep it.",
    schema: { type: "string", enum: ["no-store"] },
  },
  "Content-Disposition": {
    description: '`attachment; filename="…"`: the answer is a file to save, with the name it suggests.',
    schema: { type: "string", maxLength: 200, pattern: '^attachment; filename="[A-Za-z0-9._-]{1,160}"$' },
  },
} as const;

type HeaderName = keyof typeof responseHeaders;

function headerRefs(names: HeaderName[]) {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

const RATE_LIMIT_HEADERS: HeaderName[] = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** Registers what the builders refer to: the headers, the Error schema and the security schemes of a document. */
export function registerSharedComponents(
  registry: OpenAPIHono["openAPIRegistry"],
  schemes: Record<string, string | { in: "query" | "cookie"; name: string; description: string }>,
): void {
  for (const [name, header] of Object.entries(responseHeaders)) {
    registry.registerComponent(
      "headers",
      name,
      structuredClone(header) as Parameters<typeof registry.registerComponent>[2],
    );
  }
  registry.register("Error", errorSchema);
  for (const [name, scheme] of Object.entries(schemes)) {
    registry.registerComponent(
      "securitySchemes",
      name,
      typeof scheme === "string"
        ? { type: "http", scheme: "bearer", description: scheme }
        : { type: "apiKey", ...scheme },
    );
  }
}

// ── Request headers ───────────────────────────────────────────────────────────────────────────────

export const IDEMPOTENCY_KEY_MAX_LENGTH = 64;

const idempotencyKeyHeader = {
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX_LENGTH)
    .regex(/^[\x20-\x7E]+$/, "must be printable ASCII")
    .optional()
    .openapi({
      description:
        "Any string of up to 64 characters, fresh per logical operation (a UUID is a good choice). Retries with " +
        "the same key within 24 hours replay the first response instead of acting twice.",
    }),
};

const mfaCodeHeader = {
  [MFA_HEADER]: z
    .string()
    .max(64)
    .regex(/^[\x20-\x7E]+$/, "must be printable ASCII")
    .optional()
    .openapi({
      description:
        "Required when the account has MFA enabled: a current TOTP code or an unused recovery code. Without a valid " +
        "one the request is refused with 403 `mfa_required`.",
    }),
};

// ── Error responses ───────────────────────────────────────────────────────────────────────────────

/** OpenAPI responses for a set of error codes, grouped by status, described from the catalogue. */
function errorResponses(codes: readonly ErrorCode[], headersFor: (status: number) => HeaderName[]) {
  const byStatus = Map.groupBy(new Set(codes), (code) => errorCatalogue[code].status);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: list.map((code) => `\`${code}\`: ${errorCatalogue[code].message}`).join("\n\n"),
        headers: headerRefs(headersFor(status)),
        content: { "application/json": { schema: errorSchema } },
      },
    ]),
  );
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

/** A body a request may leave out (then validated as `{}`): options of an operation that works without them. */
export function optionalJsonBody<T extends z.ZodType>(schema: T) {
  return { required: false, content: { "application/json": { schema } } };
}

// ── The builders ──────────────────────────────────────────────────────────────────────────────────

type OperationConfig = Omit<RouteConfig, "operationId" | "middleware"> & {
  /** camelCase verb + noun, unique and stable: generated clients name their methods after it. */
  operationId: string;
  errors?: readonly ErrorCode[];
};

/** The area of the key scopes each tag's operations belong to. */
const TAG_AREAS: Record<string, KeyArea> = {
  Account: "account",
  "Sub-users": "subusers",
  Whitelists: "subusers",
  Tools: "subusers",
  Orders: "billing",
  Subscriptions: "billing",
  ISP: "isp",
  Sessions: "traffic",
  Traffic: "traffic",
  Reports: "reports",
  Webhooks: "webhooks",
  Events: "webhooks",
  "API keys": "api_keys",
  "Audit log": "account",
  Members: "members",
};

type ApiOperationConfig = OperationConfig & {
  /**
   * The scope the key needs: by default the area of the operation's tag, `read` for GET and `write` otherwise
   * (stated in its description, enforced before its handler: 403 `insufficient_scope`). `"any key"`: an operation
   * about the key itself or the service, open to every key whatever its scopes.
   */
  scope?: { area?: KeyArea; access?: KeyAccess } | "any key";
  /** A gated action: declares `X-MFA-Code` and 403 `mfa_required`. */
  mfa?: boolean;
  /** The success response shows a secret once: `Cache-Control: no-store`, sealed in the idempotency store. */
  secret?: boolean;
  /** A cursor-paginated list: `Link` on its success response. */
  paginated?: boolean;
  /** The success response is a file made for this request: `Content-Disposition: attachment`, `no-store`. */
  download?: boolean;
  /** A test helper: sandbox (`test_`) keys only, a live key refused first with 403 `sandbox_key_required`. */
  sandboxOnly?: boolean;
  /**
   * Open to keys bound to sub-users, whose domain verb confines them to their sub-users. Any other operation (what
   * spans the account: its money, totals, settings) refuses them 403 `subuser_binding`, so one added later is
   * closed to them until it says otherwise. An operation open to any key is open to them too.
   */
  boundKeys?: boolean;
  /**
   * An operation about the calling member's own sign-in (its session, sessions, MFA): a signed-in member alone, an
   * API key refused 403 `session_required`. Not a key operation: no `x-key-scope`, so no MCP tool.
   */
  session?: boolean;
  /** `false`: no MCP tool is made of it (`x-mcp-tool: false`), e.g. managing the account's people. */
  mcpTool?: boolean;
  /** What only the live account has (its people): a sandbox key refused 403 `live_key_required` after its scopes. */
  liveOnly?: boolean;
};

/**
 * What an operation needs of a key, machine-readable beside the prose of its description (tools built from the
 * document, e.g. the MCP server's, read them): `x-key-scope` is `area:access`, or `any` for an operation open to
 * every key; `x-sandbox-only` marks the test helpers.
 */
export const KEY_SCOPE_EXTENSION = "x-key-scope";
export const ANY_KEY_SCOPE = "any";
export const SANDBOX_ONLY_EXTENSION = "x-sandbox-only";
/** `x-bound-keys: true`: the operation is open to keys bound to sub-users (for their sub-users alone). */
export const BOUND_KEYS_EXTENSION = "x-bound-keys";
/** `x-live-only: true`: the operation is the live account's alone (its people); a sandbox key is refused. */
const LIVE_ONLY_EXTENSION = "x-live-only";
/** `x-mcp-tool: false`: tools built from the document leave the operation out. */
export const MCP_TOOL_EXTENSION = "x-mcp-tool";
/** `x-session-only: true`: the operation is a signed-in member's own (its session cookie), never a key's. */
const SESSION_ONLY_EXTENSION = "x-session-only";

const PUBLIC_ERRORS: ErrorCode[] = ["unauthorized", "insufficient_scope", "rate_limited", "internal_error"];
const WRITE_ERRORS: ErrorCode[] = [
  "csrf_failed",
  "invalid_json",
  "invalid_request",
  "idempotency_key_reused",
  "idempotency_key_in_use",
];

function withHeaders(route: RouteConfig, headers: Record<string, z.ZodType>): RouteConfig["request"] {
  if (Object.keys(headers).length === 0) return route.request;
  const own = route.request?.headers;
  const merged = own instanceof z.ZodObject ? own.extend(headers) : z.object(headers);
  return { ...route.request, headers: merged };
}

function successResponses(route: RouteConfig, headers: HeaderName[]) {
  return Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => [
      status,
      "$ref" in response ? response : { ...response, headers: headerRefs(headers) },
    ]),
  );
}

/** What every JSON object a `/v1` operation answers with carries (added by `middleware/livemode`). */
export const livemodeSchema = z
  .object({
    livemode: z.boolean().openapi({
      description: "`false` in the sandbox (a `test_` API key acts on the account's sandbox twin), `true` otherwise.",
    }),
  })
  .openapi("Livemode");

/** A success response's JSON object schema as sent: the resource and `livemode` (arrays and other types as is). */
function withLivemode(responses: RouteConfig["responses"]): RouteConfig["responses"] {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const content = "content" in response ? response.content : undefined;
      const json = content?.["application/json"];
      const schema = json && "schema" in json ? json.schema : undefined;
      if (!content || !(schema instanceof z.ZodType) || schema instanceof z.ZodArray) return [status, response];
      const sent = { ...json, schema: z.intersection(schema, livemodeSchema) };
      return [status, { ...response, content: { ...content, "application/json": sent } }];
    }),
  );
}

type Built<R> = R & { getRoutingPath(): string; middleware?: MiddlewareHandler[] };

/**
 * A public `/v1` operation: Bearer security; rate-limit headers and `X-Request-Id` on every response;
 * `Retry-After` on 429; `Idempotency-Key` and `Idempotent-Replayed` on writes; `Link` on lists.
 */
export function apiRoute<const R extends ApiOperationConfig>(config: R): Built<R> {
  const {
    errors = [],
    mfa = false,
    secret = false,
    paginated = false,
    download = false,
    sandboxOnly = false,
    scope = {},
    boundKeys = false,
    session = false,
    mcpTool = true,
    liveOnly = false,
    ...route
  } = config;
  const isWrite = route.method !== "get";
  const required = session ? null : requiredScope(route, scope);
  const openToBound = boundKeys || required === null;
  const codes = [
    ...(required ? PUBLIC_ERRORS : PUBLIC_ERRORS.filter((code) => code !== "insufficient_scope")),
    ...(openToBound ? [] : ["subuser_binding" as const]),
    ...(session ? ["session_required" as const] : []),
    ...(isWrite ? WRITE_ERRORS : []),
    ...(mfa ? ["mfa_required" as const] : []),
    ...(sandboxOnly ? ["sandbox_key_required" as const] : []),
    ...(liveOnly ? ["live_key_required" as const] : []),
    ...errors,
  ];
  const everyResponse: HeaderName[] = [
    "X-Request-Id",
    ...RATE_LIMIT_HEADERS,
    ...(isWrite ? ["Idempotent-Replayed" as const] : []),
  ];
  const success: HeaderName[] = [
    ...everyResponse,
    ...(paginated ? ["Link" as const] : []),
    ...(secret || download ? ["Cache-Control" as const] : []),
    ...(download ? ["Content-Disposition" as const] : []),
  ];
  const who = session
    ? "Signed-in members only (the session cookie); an API key gets 403 `session_required`."
    : `Key scope: ${required ? `\`${required.area}:${required.access}\`` : "any key"}.${boundNote(required, openToBound)}`;
  return createRoute({
    ...route,
    // The scope is stated in the description: OpenAPI lists scopes in security requirements for OAuth only.
    description: `${route.description ?? ""}\n\n${who}`.trimStart(),
    security: session ? [{ SessionCookie: [] }] : [{ ApiKey: [] }, { SessionCookie: [] }],
    ...(session
      ? { [SESSION_ONLY_EXTENSION]: true }
      : { [KEY_SCOPE_EXTENSION]: required ? `${required.area}:${required.access}` : ANY_KEY_SCOPE }),
    ...(mcpTool ? {} : { [MCP_TOOL_EXTENSION]: false }),
    ...(sandboxOnly ? { [SANDBOX_ONLY_EXTENSION]: true } : {}),
    ...(liveOnly ? { [LIVE_ONLY_EXTENSION]: true } : {}),
    ...(openToBound ? { [BOUND_KEYS_EXTENSION]: true } : {}),
    request: withHeaders(route, { ...(isWrite ? idempotencyKeyHeader : {}), ...(mfa ? mfaCodeHeader : {}) }),
    responses: {
      ...successResponses({ ...route, responses: withLivemode(route.responses) }, success),
      ...errorResponses(codes, (status) => {
        if (status >= 500) return ["X-Request-Id"];
        return status === 429 ? [...everyResponse, "Retry-After"] : everyResponse;
      }),
    },
    // A sandbox-only operation refuses a live key before anything else, its request not even validated.
    middleware: [
      ...(session ? [requireSession] : []),
      ...(sandboxOnly ? [requireSandboxKey] : []),
      ...(required ? [requireScope(required.area, required.access)] : []),
      ...(liveOnly ? [requireLiveKey] : []),
      ...(openToBound ? [] : [refuseBoundKeys]),
      ...(secret || download ? [noStore] : []),
    ],
  }) as unknown as Built<R>;
}

/** What the description says of keys bound to sub-users (nothing for an operation open to any key). */
function boundNote(required: { area: KeyArea } | null, openToBound: boolean): string {
  if (required === null) return "";
  return openToBound ? " Keys bound to sub-users: confined to their sub-users." : " Keys bound to sub-users: refused.";
}

/** The scope an operation needs (null: any key), from its own `scope` or its tag's area and its method. */
function requiredScope(
  route: RouteConfig,
  scope: NonNullable<ApiOperationConfig["scope"]>,
): { area: KeyArea; access: KeyAccess } | null {
  if (scope === "any key") return null;
  const area = scope.area ?? TAG_AREAS[route.tags?.[0] ?? ""];
  if (!area) throw new Error(`${route.operationId}: no key scope area for tag ${route.tags?.[0]}`);
  return { area, access: scope.access ?? (route.method === "get" ? "read" : "write") };
}

/**
 * Who may call an internal operation: the admin token; a gateway node's own credential (`GatewayNode`: the node
 * contract, where every claim is bound to the calling node); or either a node's credential or the fleet's shared
 * gateway token (`GatewayToken`, kept for one release).
 */
type InternalCaller = "AdminToken" | "GatewayNode" | "GatewayToken";
const INTERNAL_SECURITY: Record<InternalCaller, Array<Record<string, string[]>>> = {
  AdminToken: [{ AdminToken: [] }],
  GatewayNode: [{ GatewayNode: [] }],
  GatewayToken: [{ GatewayNode: [] }, { GatewayToken: [] }],
};

/** An internal operation (admin or gateway): its own bearer token, `X-Request-Id` on every response. */
export function internalRoute<const R extends OperationConfig & { secret?: boolean }>(
  config: R,
  caller: InternalCaller,
): Built<R> {
  const { errors = [], secret = false, ...route } = config;
  const codes: ErrorCode[] = [
    "unauthorized",
    "internal_error",
    ...(route.method === "get" ? [] : (["invalid_json", "invalid_request"] as const)),
    ...(caller === "GatewayNode" ? (["node_credential_required", "node_mismatch"] as const) : []),
    ...errors,
  ];
  return createRoute({
    ...route,
    security: INTERNAL_SECURITY[caller],
    responses: {
      ...successResponses(route, ["X-Request-Id", ...(secret ? ["Cache-Control" as const] : [])]),
      ...errorResponses(codes, () => ["X-Request-Id"]),
    },
    ...(secret ? { middleware: [noStore] } : {}),
  }) as unknown as Built<R>;
}

/**
 * A public operation authorized by a signed link instead of an API key (a report file's download): the `SignedLink`
 * scheme, the client address's rate-limit window (`X-RateLimit-*`, 429), `X-Request-Id` on every response.
 */
export function signedLinkRoute<const R extends OperationConfig>(config: R): Built<R> {
  const { errors = [], ...route } = config;
  const codes: ErrorCode[] = ["invalid_request", "rate_limited", "internal_error", ...errors];
  const everyResponse: HeaderName[] = ["X-Request-Id", ...RATE_LIMIT_HEADERS];
  return createRoute({
    ...route,
    security: [{ SignedLink: [] }],
    responses: {
      ...successResponses(route, [...everyResponse, "Cache-Control", "Content-Disposition"]),
      ...errorResponses(codes, (status) => {
        if (status >= 500) return ["X-Request-Id"];
        return status === 429 ? [...everyResponse, "Retry-After"] : everyResponse;
      }),
    },
  }) as unknown as Built<R>;
}

/**
 * A public operation that no credential authorizes, because it is how a person gets one (sign-in, accepting an
 * invitation, a password reset): no security, the client address's rate-limit window (`X-RateLimit-*`, 429), and
 * `X-Request-Id` on every response. A browser's `Origin`, when sent, must be the API's own (403 `csrf_failed`).
 */
export function publicRoute<const R extends OperationConfig & { secret?: boolean }>(config: R): Built<R> {
  const { errors = [], secret = false, ...route } = config;
  const codes: ErrorCode[] = [
    "invalid_json",
    "invalid_request",
    "csrf_failed",
    "rate_limited",
    "internal_error",
    ...errors,
  ];
  const everyResponse: HeaderName[] = ["X-Request-Id", ...RATE_LIMIT_HEADERS];
  return createRoute({
    ...route,
    security: [],
    responses: {
      ...successResponses(route, [...everyResponse, ...(secret ? ["Cache-Control" as const] : [])]),
      ...errorResponses(codes, (status) => {
        if (status >= 500) return ["X-Request-Id"];
        return status === 429 ? [...everyResponse, "Retry-After"] : everyResponse;
      }),
    },
    ...(secret ? { middleware: [noStore] } : {}),
  }) as unknown as Built<R>;
}
