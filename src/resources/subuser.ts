import { z } from "@hono/zod-openapi";
import { products, type SubuserRow, spikeActions, spikeSettings, subuserStatuses } from "../db/schema";
import { LIMIT_MAX, LIMIT_MIN } from "../domain/subusers/limits";
import type { SourceEntry } from "../durable-objects/traffic-store/contract";
import { toIso } from "../platform/clock";
import { decimal, id, idParam, integer, list, timestamp, token } from "../platform/fields";
import { bytesToGb, gbToBytes } from "../platform/units";

export const labelSchema = token(/^[a-z0-9-]{1,64}$/, 64, "must be 1-64 characters of a-z, 0-9 and -").openapi({
  example: "scraper-eu-1",
});

export const limitSchema = integer(LIMIT_MIN, LIMIT_MAX);

export { productListSchema } from "./vocabulary";

export const subuserIdParam = z.object({ id: idParam("subuser").openapi({ param: { name: "id", in: "path" } }) });

export const alertOnNewSourceSchema = z.boolean().openapi({
  description:
    "Record a `subuser.new_source` event when the sub-user's traffic comes from a client block (IPv4 /24, IPv6 " +
    "/64) not seen in its last 30 days: at most one event per 15 minutes, counting the new blocks since the " +
    "previous one. Default false.",
});

export const spikeSensitivitySchema = z.enum(spikeSettings).openapi({
  description:
    "Spike alerts: how far above its own baseline (the same hour of the week over its past 4 weeks) the " +
    "sub-user's traffic must go to raise `subuser.traffic_spike` — `high` alerts soonest, `low` only on large " +
    "spikes — or `off`. Default `medium`.",
});

export const spikeActionSchema = z.enum(spikeActions).openapi({
  description:
    "What a spike episode does on its own until someone acknowledges it (`POST /traffic-spikes/{id}/acknowledge`): " +
    "`disable` the sub-user, `cap` its requests per second at its baseline, or `none` (the default: events only).",
});

export const subuserSchema = z
  .object({
    id: id("subuser"),
    name: token(/^[a-z0-9]{1,32}$/, 32).openapi({
      description: "Generated gateway account name.",
      example: "s1a2b3c4d5e",
    }),
    label: labelSchema,
    products: list(z.enum(products), products.length),
    status: z.enum(subuserStatuses),
    concurrent_max: limitSchema,
    rps_max: limitSchema,
    traffic_limit_gb: z
      .number()
      .nullable()
      .openapi({
        description:
          "Monthly (UTC) traffic cap in GB; over it the gateway answers 402 traffic-limit-reached, within 60 seconds " +
          "of the request that passed it (the usage's own wait to be counted: the sub-user's traffic of that time " +
          "runs past the cap). null: none.",
      }),
    traffic_used_gb: z.number().openapi({
      description:
        "Traffic of the current UTC month, in GB (10^9 bytes): every request counted so far (usage counts within " +
        "60 seconds of the gateway reporting it).",
    }),
    alert_on_new_source: alertOnNewSourceSchema,
    spike_sensitivity: spikeSensitivitySchema,
    spike_action: spikeActionSchema,
    created_at: timestamp(),
  })
  .openapi("Subuser");

/** A monthly cap in GB: whole MB, at least 1 MB; null removes it. */
export const trafficLimitSchema = decimal({ unit: 0.001, min: 0.001, max: 1_000_000 })
  .nullable()
  .openapi({ description: "Monthly (UTC) traffic cap in GB (steps of 0.001); null for none." });

export function presentSubuser(subuser: SubuserRow, monthUsedBytes = 0): z.infer<typeof subuserSchema> {
  return {
    id: subuser.id,
    name: subuser.name,
    label: subuser.label,
    products: subuser.products,
    status: subuser.status,
    concurrent_max: subuser.concurrentMax,
    rps_max: subuser.rpsMax,
    traffic_limit_gb: subuser.trafficLimitBytes === null ? null : bytesToGb(subuser.trafficLimitBytes),
    traffic_used_gb: bytesToGb(monthUsedBytes),
    alert_on_new_source: subuser.alertOnNewSource,
    spike_sensitivity: subuser.spikeSensitivity,
    spike_action: subuser.spikeAction,
    created_at: toIso(subuser.createdAt),
  };
}

export const clientSourceSchema = z
  .object({
    block: token(/^[0-9A-Fa-f:.]+\/\d{1,3}$/, 49).openapi({
      description: "The client block: an IPv4 /24 or an IPv6 /64.",
      example: "198.51.100.0/24",
    }),
    first_seen: timestamp(),
    last_seen: timestamp(),
    requests: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    bytes: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64", description: "Bytes in + out." }),
  })
  .openapi("ClientSource");

export function presentClientSource(source: SourceEntry): z.infer<typeof clientSourceSchema> {
  return {
    block: source.block,
    first_seen: toIso(source.firstSeen),
    last_seen: toIso(source.lastSeen),
    requests: source.requests,
    bytes: source.bytes,
  };
}

/** A generated password: 32 base62 characters, shown once. */
export const passwordSchema = token(/^[0-9A-Za-z]{16,64}$/, 64);

export const subuserWithPasswordSchema = subuserSchema
  .extend({
    password: passwordSchema.openapi({
      description: "Shown only here; stored as a hash.",
      example: "q3XvLr8TmWc2Zp9AbN4sKd7HfJ1uYe6G",
    }),
  })
  .openapi("SubuserWithPassword");

/** A cap in GB as bytes (null and undefined pass through). */
export function toBytes(gb: number | null | undefined): number | null | undefined {
  return gb === null || gb === undefined ? gb : gbToBytes(gb);
}
