import { z } from "@hono/zod-openapi";
import type { GroupBy, RequestSample, TrafficRow } from "../durable-objects/traffic-store/contract";
import { toIso } from "../platform/clock";
import { id, integer, ipText, list, text, timestamp, token } from "../platform/fields";
import { fractionOf } from "../platform/units";

const count = () => integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" });

export const trafficSchema = z
  .object({
    from: timestamp().openapi({ description: "Start of the range answered, aligned to the resolution." }),
    to: timestamp().openapi({ description: "End of the range answered (exclusive), aligned to the resolution." }),
    resolution: z.enum(["1m", "5m", "1h", "1d"]).openapi({
      description:
        "The data resolution that answered: by the age of `from` (1 minute under 24 h, 5 minutes to 14 days, 1 hour to 90 days, 1 day beyond).",
    }),
    rows: list(
      z.object({
        subuser: id("subuser").optional(),
        label: text(64)
          .nullable()
          .optional()
          .openapi({ description: "With `subuser`: its label (a deleted sub-user's last one); null if unknown." }),
        region: token(/^[a-z]{2}$/, 2).optional(),
        asn: integer(0, 4_294_967_295).optional(),
        carrier_name: text(100).nullable().optional().openapi({ description: "Mobile, with `asn`." }),
        tag: token(/^[a-z0-9_-]{1,64}$/, 64)
          .nullable()
          .optional(),
        day: token(/^\d{4}-\d{2}-\d{2}$/, 10).optional(),
        hour: timestamp().optional(),
        ip: ipText().optional(),
        domain: text(255, 1)
          .optional()
          .openapi({
            description:
              "The registrable domain (eTLD+1) of the target host; `(ip)` for IP address targets, `(none)` for hosts " +
              "without one, `(other)` for the domains past the bound.",
            example: "example.co.uk",
          }),
        status: integer(0, 999)
          .nullable()
          .optional()
          .openapi({ description: "The HTTP status the client got; null for usage reported before it was kept." }),
        error_code: token(/^[a-z0-9_.-]{1,64}$/, 64)
          .optional()
          .openapi({ description: "The gateway's error code of the failed requests.", example: "upstream-timeout" }),
        bytes_in: count(),
        bytes_out: count(),
        requests: count(),
        errors: count(),
        error_rate: z.number().min(0).max(1).openapi({ description: "errors / requests (0 without requests)." }),
      }),
      100_000,
    ),
  })
  .openapi("Traffic");

export function presentTraffic(
  answer: {
    from: number;
    to: number;
    resolution: "1m" | "5m" | "1h" | "1d";
    rows: Array<TrafficRow & { label?: string | null }>;
  },
  groupBy: GroupBy | null,
): z.infer<typeof trafficSchema> {
  return {
    from: toIso(answer.from),
    to: toIso(answer.to),
    resolution: answer.resolution,
    rows: answer.rows.map((row) => ({
      ...groupKey(row, groupBy),
      ...(row.label !== undefined ? { label: row.label } : {}),
      ...(row.carrierName !== undefined ? { carrier_name: row.carrierName } : {}),
      bytes_in: row.bytesIn,
      bytes_out: row.bytesOut,
      requests: row.requests,
      errors: row.errors,
      error_rate: fractionOf(row.errors, row.requests),
    })),
  };
}

function groupKey(row: TrafficRow, groupBy: GroupBy | null) {
  switch (groupBy) {
    case null:
      return {};
    case "day":
      return { day: toIso(Number(row.key)).slice(0, 10) };
    case "hour":
      return { hour: toIso(Number(row.key)) };
    case "asn":
      return { asn: Number(row.key) };
    case "tag":
      return { tag: row.key === "" ? null : String(row.key) };
    case "status":
      return { status: row.key === null ? null : Number(row.key) };
    default:
      return { [groupBy]: String(row.key) };
  }
}

export const requestLogEntrySchema = z
  .object({
    request_id: token(/^req_[0-9A-Za-z]{1,60}$/, 64),
    ts: timestamp(),
    subuser: id("subuser"),
    method: token(/^[A-Z]{1,16}$/, 16),
    target_host: text(255),
    status: integer(0, 999),
    bytes: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    exit_ip: ipText(),
    exit_geo: token(/^[a-z]{2}\/[a-z0-9]{0,3}\/[a-z0-9]{0,40}$/, 48),
    exit_asn: integer(0, 4_294_967_295),
    tag: token(/^[a-z0-9_-]{1,64}$/, 64).nullable(),
  })
  .openapi("RequestLogEntry");

export function presentRequest(sample: RequestSample): z.infer<typeof requestLogEntrySchema> {
  return {
    request_id: sample.requestId,
    ts: toIso(sample.ts),
    subuser: sample.subuserId,
    method: sample.method,
    target_host: sample.targetHost,
    status: sample.status,
    bytes: sample.bytes,
    exit_ip: sample.exitIp,
    exit_geo: sample.exitGeo,
    exit_asn: sample.exitAsn,
    tag: sample.tag,
  };
}
