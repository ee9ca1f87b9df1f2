import { z } from "@hono/zod-openapi";
import type { SessionRequest, SessionSnapshot } from "../durable-objects/traffic-store/contract";
import { toIso } from "../platform/clock";
import { id, integer, ipText, list, text, timestamp, token } from "../platform/fields";

export const sessionSchema = z
  .object({
    id: id("session"),
    subuser: id("subuser"),
    session_id: token(/^[a-z0-9]{1,32}$/, 32).openapi({ description: "The caller-chosen part of the username." }),
    region: token(/^[a-z]{2}$/, 2),
    state: token(/^[a-z0-9]{1,3}$/, 3).nullable(),
    city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
    asn: integer(0, 4_294_967_295).nullable(),
    exit_ip: ipText().nullable().openapi({ description: "null until the session's first request is reported." }),
    started_at: timestamp(),
    expires_at: timestamp().openapi({ description: "started_at plus the session's sesstime." }),
    bytes_used: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    requests: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    repinned: z.boolean().openapi({ description: "The upstream IP was reassigned mid-session." }),
    status: z.enum(["active", "terminated"]),
  })
  .openapi("Session");

export function presentSession(session: SessionSnapshot): z.infer<typeof sessionSchema> {
  return {
    id: session.id,
    subuser: session.subuserId,
    session_id: session.sessionId,
    region: session.region,
    state: session.state,
    city: session.city,
    asn: session.asn,
    exit_ip: session.exitIp,
    started_at: toIso(session.startedAt),
    expires_at: toIso(session.expiresAt),
    bytes_used: session.bytesUsed,
    requests: session.requests,
    repinned: session.repinned,
    status: session.status,
  };
}

export const sessionWithRequestsSchema = sessionSchema
  .extend({
    last_requests: list(
      z.object({
        request_id: token(/^req_[0-9A-Za-z]{1,60}$/, 64),
        ts: timestamp(),
        method: token(/^[A-Z]{1,16}$/, 16),
        target_host: text(255),
        status: integer(0, 999),
        bytes: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
        exit_ip: ipText(),
      }),
      10,
    ).openapi({ description: "The session's last 10 requests, newest first." }),
  })
  .openapi("SessionWithRequests");

export function presentSessionWithRequests(found: {
  session: SessionSnapshot;
  lastRequests: SessionRequest[];
}): z.infer<typeof sessionWithRequestsSchema> {
  return {
    ...presentSession(found.session),
    last_requests: found.lastRequests.map((request) => ({
      request_id: request.requestId,
      ts: toIso(request.ts),
      method: request.method,
      target_host: request.targetHost,
      status: request.status,
      bytes: request.bytes,
      exit_ip: request.exitIp,
    })),
  };
}
