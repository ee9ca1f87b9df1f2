import { z } from "@hono/zod-openapi";
import type { ProxyTestRecord } from "../domain/tools/proxy-tests";
import { PROXY_TEST_KEPT_MS } from "../domain/tools/proxy-tests";
import { toIso } from "../platform/clock";
import { id, integer, ipText, text, timestamp, token } from "../platform/fields";

const milliseconds = () => integer(0, 3_600_000);

export const proxyTestSchema = z
  .object({
    id: id("proxyTest"),
    created_at: timestamp(),
    expires_at: timestamp().openapi({ description: "The run is deleted 24 hours after it was made." }),
    username: text(512, 1).openapi({ description: "The gateway username tested (the password is never kept)." }),
    protocol: z.enum(["http", "socks5"]),
    target: text(2048, 1).openapi({ description: "The URL requested through the gateway." }),
    auth_ok: z.boolean().openapi({
      description:
        "The gateway accepted the credentials: false on 407, on a username it cannot parse, and when it never answered.",
    }),
    status: integer(100, 599)
      .nullable()
      .openapi({
        description:
          "The gateway's answer: 200 when it admitted the request, else its refusal status (400, 402, 403, 407, 429, " +
          "502, 503); null when it never answered (see `error_code`).",
      }),
    error_code: token(/^[a-z0-9-]{1,64}$/, 64)
      .nullable()
      .openapi({
        description:
          "The gateway's `X-Service-Error-Code` (e.g. `auth-failed`, `subuser-disabled`, `rps-limit`, `bad-username`), " +
          "or the test's own: `gateway-unreachable`, `timeout`, `protocol-error`. null on success.",
      }),
    service_code: integer(1, 99_999).nullable().openapi({ description: "30002 on the gateway's 429s (spec §7)." }),
    retry_after_s: integer(1, 3600).nullable().openapi({ description: "On 429: when the gateway allows a retry." }),
    target_status: integer(100, 599).nullable().openapi({ description: "The target's HTTP status through the proxy." }),
    exit_ip: ipText().nullable(),
    exit_geo: z
      .object({
        country: token(/^[a-z]{2}$/, 2),
        state: token(/^[a-z0-9]{1,3}$/, 3).nullable(),
        city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
      })
      .nullable(),
    exit_asn: integer(0, 4_294_967_295).nullable(),
    latency_ms: z
      .object({
        connect: milliseconds().nullable().openapi({ description: "TCP connect to the gateway." }),
        tls: milliseconds().nullable().openapi({ description: "TLS handshake with an https target; null for http." }),
        ttfb: milliseconds().nullable().openapi({ description: "Request sent → first byte of the target's answer." }),
        total: milliseconds().openapi({ description: "The whole test." }),
      })
      .openapi({ description: "Each phase on its own; null for a phase that did not happen." }),
    parsed: z
      .object({
        subuser: id("subuser").nullable(),
        type: z.enum(["res", "mob"]).nullable(),
        region: token(/^[a-z]{2}$/, 2).nullable(),
        state: token(/^[a-z0-9]{1,3}$/, 3).nullable(),
        city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
        session_id: token(/^[a-z0-9]{1,32}$/, 32).nullable(),
        sesstime: integer(1, 60).nullable(),
        asn: integer(0, 4_294_967_295).nullable(),
      })
      .openapi({ description: "The username's segments (spec §2.13); unset segments are null." }),
  })
  .openapi("ProxyTestResult");

export function presentProxyTest(record: ProxyTestRecord): z.infer<typeof proxyTestSchema> {
  const { outcome, parsed } = record;
  const exit = outcome.exit;
  return {
    id: record.id,
    created_at: toIso(record.createdAt),
    expires_at: toIso(record.createdAt + PROXY_TEST_KEPT_MS),
    username: record.username,
    protocol: record.protocol,
    target: record.target,
    auth_ok: outcome.status !== null && ![400, 407, 503].includes(outcome.status),
    status: outcome.status,
    error_code: outcome.errorCode,
    service_code: outcome.serviceCode,
    retry_after_s: outcome.retryAfterS,
    target_status: outcome.targetStatus,
    exit_ip: exit?.ip ?? null,
    exit_geo: exit ? { country: exit.country, state: exit.state, city: exit.city } : null,
    exit_asn: exit?.asn ?? null,
    latency_ms: outcome.latencyMs,
    parsed: {
      subuser: record.subuserId,
      type: parsed?.type ?? null,
      region: parsed?.region ?? null,
      state: parsed?.state ?? null,
      city: parsed?.city ?? null,
      session_id: parsed?.sessionId ?? null,
      sesstime: parsed?.sesstime ?? null,
      asn: parsed?.asn ?? null,
    },
  };
}
