import { z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { integer, ipText, text, timestamp, token } from "../../platform/fields";

/**
 * The gateway's usage report (docs/gateway.md): the exact field names the gateway is built against. Bytes are
 * counted as the gateway counts them; 1 GB = 10^9 bytes.
 */
export const MAX_RECORDS_PER_BATCH = 1000;
const MAX_BYTES = 1_000_000_000_000; // 1 TB for one request is far beyond any real one

export const usageRecordSchema = z
  .strictObject({
    request_id: token(/^req_[0-9A-Za-z]{1,60}$/, 64).openapi({ description: "The gateway's request id." }),
    ts: timestamp().openapi({ description: "When the request finished (RFC 3339)." }),
    product: z.enum(products),
    username: text(512, 1).openapi({
      description: "The full gateway username (the session key); for ISP the `{prefix}_{name}` user.",
    }),
    dest_ip: ipText().nullable().openapi({ description: "ISP: the batch IP addressed." }),
    method: token(/^[A-Z]{1,16}$/, 16),
    target_host: text(255, 1),
    status: integer(0, 999).openapi({ description: "HTTP status returned to the client." }),
    bytes_in: integer(0, MAX_BYTES).openapi({ description: "Bytes from the target.", format: "int64" }),
    bytes_out: integer(0, MAX_BYTES).openapi({ description: "Bytes sent to the target.", format: "int64" }),
    exit_ip: ipText(),
    exit_geo: token(/^[a-z]{2}\/[a-z0-9]{0,3}\/[a-z0-9]{0,40}$/, 48, "must be cc/state/city").openapi({
      example: "us/ca/la",
    }),
    exit_asn: integer(0, 4_294_967_295),
    carrier_name: text(100).nullable().openapi({ description: "Mobile: the carrier." }),
    tag: token(/^[a-z0-9_-]{1,64}$/, 64)
      .nullable()
      .openapi({ description: "The client's tag header." }),
    error_code: token(/^[a-z0-9-]{1,64}$/, 64)
      .nullable()
      .openapi({ description: "Set when the proxy request failed (e.g. `rps-limit`, `upstream-timeout`): an error." }),
    repinned: z.boolean().openapi({ description: "The upstream IP of a sticky session was reassigned." }),
  })
  .openapi("UsageRecord");

export const usageBatchSchema = z
  .strictObject({
    batch_id: text(64, 1).openapi({ description: "The gateway's id of this batch: a retry sends the same one." }),
    records: z.array(usageRecordSchema).min(1).max(MAX_RECORDS_PER_BATCH),
  })
  .openapi("UsageBatch");

export type UsageRecord = z.infer<typeof usageRecordSchema>;
export type UsageBatch = z.infer<typeof usageBatchSchema>;
