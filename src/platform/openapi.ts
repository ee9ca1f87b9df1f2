import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { type ErrorCode, errorCatalogue } from "./errors";

export const errorSchema = z
  .object({
    code: z.string().openapi({ example: "invalid_request" }),
    message: z.string().openapi({ example: "label: must match [a-z0-9-]{1,64}." }),
    request_id: z.string().openapi({ example: "req_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    details: z
      .array(z.object({ field: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: "Every field problem, on `invalid_request`." }),
  })
  .openapi("Error");

/** OpenAPI responses for a set of error codes, grouped by status, described from the catalogue. */
export function errorResponses(codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: list.map((code) => `\`${code}\`: ${errorCatalogue[code].message}`).join("\n\n"),
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

const publicApiErrors = ["unauthorized", "rate_limited", "internal_error"] as const satisfies ErrorCode[];
const writeErrors = [
  "invalid_json",
  "invalid_request",
  "idempotency_key_reused",
  "idempotency_key_in_use",
] as const satisfies ErrorCode[];

const idempotencyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({
    description: "Up to 64 characters. Retries with the same key replay the first response for 24 hours.",
    example: "order-2026-11-21-0001",
  }),
});

type ApiRouteConfig = RouteConfig & { errors?: readonly ErrorCode[] };

/**
 * A public `/v1` operation: Bearer security, the errors every call can meet,
 * the Idempotency-Key header on writes, plus the operation's own errors.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { errors = [], ...route } = config;
  const isWrite = route.method !== "get";
  const codes = [...publicApiErrors, ...(isWrite ? writeErrors : []), ...errors];
  return createRoute({
    ...route,
    security: [{ ApiKey: [] }],
    request: isWrite && !route.request?.headers ? { ...route.request, headers: idempotencyHeader } : route.request,
    responses: { ...route.responses, ...errorResponses(codes) },
  }) as unknown as R & { getRoutingPath(): string };
}

/** An internal operation (admin or gateway): its own bearer token, its own tag. */
export function internalRoute<const R extends ApiRouteConfig>(config: R, scheme: "AdminToken" | "GatewayToken") {
  const { errors = [], ...route } = config;
  const codes = [
    "unauthorized",
    "internal_error",
    ...(route.method === "get" ? [] : ["invalid_json" as const]),
    ...errors,
  ] as ErrorCode[];
  return createRoute({
    ...route,
    security: [{ [scheme]: [] }],
    responses: { ...route.responses, ...errorResponses(codes) },
  }) as unknown as R & { getRoutingPath(): string };
}
