import { z } from "@hono/zod-openapi";
import {
  products,
  type SubuserRow,
  spikeActions,
  spikeSettings,
  subuserStatuses,
  type TargetRules,
  targetRuleModes,
} from "../db/schema";
import { LIMIT_MAX, LIMIT_MIN } from "../domain/subusers/limits";
import type { PeriodUsage, SourceEntry } from "../durable-objects/traffic-store/contract";
import { toIso } from "../platform/clock";
import { decimal, id, idParam, instant, integer, list, text, timestamp, token } from "../platform/fields";
import { canonicalDomain, canonicalRange, MAX_TARGET_DOMAINS, MAX_TARGET_IP_RANGES } from "../platform/target-rules";
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

/** A field of text the rules keep in canonical form, or a 400 naming what it must be. */
function canonical(max: number, form: (text: string) => string | null, must: string) {
  return text(max, 1).transform((value, context) => {
    const canonicalForm = form(value);
    if (canonicalForm !== null) return canonicalForm;
    context.addIssue({ code: "custom", message: must });
    return z.NEVER;
  });
}

const targetRulesFields = {
  mode: z.enum(targetRuleModes).openapi({
    description: "`allow`: only the listed destinations are reachable; `deny`: every destination but them.",
  }),
  domains: list(text(253, 1), MAX_TARGET_DOMAINS).openapi({
    description: "Domains, each covering its subdomains (`example.com` covers `www.example.com`); lower-case.",
    example: ["example.com"],
  }),
  ip_ranges: list(text(49, 1), MAX_TARGET_IP_RANGES).openapi({
    description: "IPv4 and IPv6 addresses and CIDR blocks, canonical; they match targets written as an address.",
    example: ["203.0.113.0/24"],
  }),
};

export const targetRulesSchema = z.object(targetRulesFields).openapi("TargetRules", {
  description:
    "Where the sub-user's requests may go, checked at the gateway for each HTTP request's host, each CONNECT and " +
    "each SOCKS5 request: a refused target is answered 403 `target-denied` (SOCKS5 reply 0x02), counted as an " +
    "error in traffic and the request log.",
});

/** Target rules as a request takes them: domains and ranges in canonical form, each listed once. */
export const targetRulesInputSchema = z
  .strictObject({
    ...targetRulesFields,
    domains: list(
      canonical(253, canonicalDomain, "must be a domain name (letters, digits and -, IDNs as xn--)"),
      MAX_TARGET_DOMAINS,
    ),
    ip_ranges: list(
      canonical(49, canonicalRange, "must be an IPv4 or IPv6 address or CIDR block without host bits"),
      MAX_TARGET_IP_RANGES,
    ),
  })
  .nullable()
  .openapi("TargetRulesInput", {
    description:
      `Where the sub-user's requests may go (at most ${MAX_TARGET_DOMAINS} domains and ${MAX_TARGET_IP_RANGES} ` +
      "IP ranges, duplicates merged), or null for anywhere. A change reaches every gateway node within a second.",
    example: { mode: "allow", domains: ["example.com"], ip_ranges: [] },
  });

/** Target rules as the API stores them (null: anywhere; empty allow lists are kept: nothing is reachable). */
export function toTargetRules(
  input: z.infer<typeof targetRulesInputSchema> | undefined,
): TargetRules | null | undefined {
  if (input === undefined || input === null) return input;
  return { mode: input.mode, domains: [...new Set(input.domains)], ipRanges: [...new Set(input.ip_ranges)] };
}

export const dailyLimitSchema = capInGb(
  "Daily (UTC day) traffic cap in GB (steps of 0.001); over it the gateway answers 402 daily-limit-reached until " +
    "the next UTC day. null for none.",
);

export const lifetimeLimitSchema = capInGb(
  "Traffic cap in GB over the sub-user's whole life (steps of 0.001); over it the gateway answers 402 " +
    "lifetime-limit-reached. It never resets: raise or remove it to let the sub-user go on. null for none.",
);

export const subuserExpirySchema = instant()
  .nullable()
  .openapi({
    description:
      "From this instant the gateway refuses the sub-user's requests (403 subuser-expired, within a second) and " +
      "`subuser.expired` is raised once; a later value brings it back. null: never expires.",
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
    daily_limit_gb: z
      .number()
      .nullable()
      .openapi({
        description:
          "Daily (UTC) traffic cap in GB; over it the gateway answers 402 daily-limit-reached, within 60 seconds of " +
          "the request that passed it, until 00:00 UTC. null: none.",
      }),
    traffic_used_today_gb: z.number().openapi({
      description: "Traffic of the current UTC day, in GB, counted as `traffic_used_gb` is.",
    }),
    lifetime_limit_gb: z
      .number()
      .nullable()
      .openapi({
        description:
          "Traffic cap in GB over the sub-user's life; over it the gateway answers 402 lifetime-limit-reached, " +
          "within 60 seconds of the request that passed it. Nothing resets it: raise or remove it to go on. " +
          "null: none.",
      }),
    traffic_used_lifetime_gb: z.number().openapi({
      description: "Traffic since the sub-user was created, in GB, counted as `traffic_used_gb` is.",
    }),
    target_rules: targetRulesSchema.nullable().openapi({ description: "null: every destination is reachable." }),
    expires_at: timestamp()
      .nullable()
      .openapi({ description: "From then on its requests are refused (403 subuser-expired); null: never." }),
    alert_on_new_source: alertOnNewSourceSchema,
    spike_sensitivity: spikeSensitivitySchema,
    spike_action: spikeActionSchema,
    created_at: timestamp(),
  })
  .openapi("Subuser");

/** A cap in GB: whole MB, at least 1 MB; null removes it. */
function capInGb(description: string) {
  return decimal({ unit: 0.001, min: 0.001, max: 1_000_000 }).nullable().openapi({ description });
}

export const trafficLimitSchema = capInGb("Monthly (UTC) traffic cap in GB (steps of 0.001); null for none.");

/** `usage`: the sub-user's traffic per cap period (none yet when absent). */
export function presentSubuser(subuser: SubuserRow, usage?: PeriodUsage): z.infer<typeof subuserSchema> {
  return {
    id: subuser.id,
    name: subuser.name,
    label: subuser.label,
    products: subuser.products,
    status: subuser.status,
    concurrent_max: subuser.concurrentMax,
    rps_max: subuser.rpsMax,
    traffic_limit_gb: subuser.trafficLimitBytes === null ? null : bytesToGb(subuser.trafficLimitBytes),
    traffic_used_gb: bytesToGb(usage?.month ?? 0),
    daily_limit_gb: subuser.dailyLimitBytes === null ? null : bytesToGb(subuser.dailyLimitBytes),
    traffic_used_today_gb: bytesToGb(usage?.day ?? 0),
    lifetime_limit_gb: subuser.lifetimeLimitBytes === null ? null : bytesToGb(subuser.lifetimeLimitBytes),
    traffic_used_lifetime_gb: bytesToGb(usage?.lifetime ?? 0),
    target_rules: subuser.targetRules && {
      mode: subuser.targetRules.mode,
      domains: subuser.targetRules.domains,
      ip_ranges: subuser.targetRules.ipRanges,
    },
    expires_at: subuser.expiresAt === null ? null : toIso(subuser.expiresAt),
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
