import { z } from "@hono/zod-openapi";
import { spikeActions, spikeSettings, type TrafficSpikeRow } from "../db/schema";
import { toIso } from "../platform/clock";
import { id, idParam, integer, list, timestamp, token } from "../platform/fields";
import { bytesToGb } from "../platform/units";
import { clientSourceSchema } from "./subuser";

const rateSchema = z.object({
  gb_per_hour: z.number().min(0),
  requests_per_hour: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
});

const lessonSchema = rateSchema
  .extend({ until: timestamp().openapi({ description: "When the lesson lapses (28 days after it was taught)." }) })
  .openapi("TrafficSpikeLesson");

const domainShareSchema = z.object({
  domain: token(/^[^\s]{1,253}$/, 253),
  share: z.number().min(0).max(1).openapi({ description: "Its share of the episode's sampled bytes." }),
});

/** The figures of an episode's start: what `subuser.traffic_spike` carries. */
export const trafficSpikeStartSchema = z
  .object({
    spike: id("trafficSpike"),
    subuser: id("subuser"),
    sensitivity: z.enum(spikeSettings),
    started_at: timestamp().openapi({ description: "The start of the first 5 minutes above the threshold." }),
    detected_at: timestamp(),
    observed: rateSchema.openapi({ description: "The trailing 15 minutes' rate when the episode was detected." }),
    baseline: rateSchema
      .extend({
        weeks: integer(0, 4).openapi({ description: "Past weeks with traffic the baseline is made of." }),
        days: integer(0, 6).openapi({
          description:
            "Past days it also reads while fewer than 2 weeks had traffic at this hour (0 with 0 weeks: a new " +
            "sub-user, judged against the sensitivity's floor).",
        }),
      })
      .openapi({
        description:
          "The median rate of the same hour of the week (±1 hour) in the past 4 weeks, or the past days' for a " +
          "sub-user with little history.",
      }),
    top_domains: list(domainShareSchema, 5).openapi({ description: "From the sampled request log." }),
    top_sources: list(clientSourceSchema, 5).openapi({
      description: "Client blocks seen since the episode started, the heaviest first (bytes over 30 days).",
    }),
    action: z.enum(spikeActions),
    cap_rps: integer(1, 10_000_000).optional().openapi({ description: "`cap`: the requests per second allowed." }),
  })
  .openapi("TrafficSpikeStart");

/**
 * What `subuser.traffic_spike` carries: one notification per account per window. Its top-level figures are its
 * first episode's (the payload of one episode); `episodes` lists every episode it announces, the first included.
 */
export const trafficSpikeDigestSchema = trafficSpikeStartSchema
  .extend({
    digest: id("trafficSpikeDigest").openapi({
      description:
        "The notification's id: every episode it announces carries it as `digest` (`GET /traffic-spikes?digest=`).",
    }),
    episode_count: integer(1, Number.MAX_SAFE_INTEGER).openapi({ description: "Episodes it announces." }),
    episodes: list(trafficSpikeStartSchema, 100).openapi({
      description: "Up to 100 of them, oldest first (the first is the one the top-level figures describe).",
    }),
  })
  .openapi("TrafficSpikeDigest");

/** The figures of an episode's end: what `subuser.traffic_spike_ended` carries. */
export const trafficSpikeEndSchema = z
  .object({
    spike: id("trafficSpike"),
    subuser: id("subuser"),
    started_at: timestamp(),
    ended_at: timestamp().openapi({ description: "When its rate had stayed under the closing level 30 minutes." }),
    peak: rateSchema,
    gb: z.number().min(0).openapi({ description: "The episode's traffic (bytes in + out), in GB." }),
    requests: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    top_domains: list(domainShareSchema, 5),
    top_sources: list(clientSourceSchema, 5),
  })
  .openapi("TrafficSpikeEnd");

export const trafficSpikeSchema = z
  .object({
    id: id("trafficSpike"),
    subuser: id("subuser"),
    status: z.enum(["open", "ended"]),
    started_at: timestamp(),
    detected_at: timestamp(),
    ended_at: timestamp().nullable(),
    start: trafficSpikeStartSchema,
    end: trafficSpikeEndSchema.nullable(),
    action: z.enum(spikeActions),
    action_pending: z.boolean().openapi({
      description: "The action (`disable` or `cap`) holds until the episode is acknowledged.",
    }),
    acknowledged_at: timestamp().nullable(),
    digest: id("trafficSpikeDigest")
      .nullable()
      .openapi({
        description:
          "The `subuser.traffic_spike` notification that announces it, shared by the account's episodes announced " +
          "together (null: recorded before notifications were grouped).",
      }),
    taught: lessonSchema.nullable().openapi({
      description:
        "Acknowledged as normal (`normal: true`): the rate its sub-user's baseline is at least until `until` " +
        "(null: not taught, or undone).",
    }),
  })
  .openapi("TrafficSpike");

export const trafficSpikeIdParam = z.object({
  id: idParam("trafficSpike").openapi({ param: { name: "id", in: "path" } }),
});

export function presentTrafficSpike(row: TrafficSpikeRow): z.infer<typeof trafficSpikeSchema> {
  return {
    id: row.id,
    subuser: row.subuserId,
    status: row.endedAt === null ? "open" : "ended",
    started_at: toIso(row.startedAt),
    detected_at: toIso(row.detectedAt),
    ended_at: row.endedAt === null ? null : toIso(row.endedAt),
    start: row.figures as z.infer<typeof trafficSpikeStartSchema>,
    end: (row.outcome ?? null) as z.infer<typeof trafficSpikeEndSchema> | null,
    action: row.action,
    action_pending: row.action !== "none" && row.acknowledgedAt === null,
    acknowledged_at: row.acknowledgedAt === null ? null : toIso(row.acknowledgedAt),
    digest: row.digestId,
    taught:
      row.taught === null
        ? null
        : {
            gb_per_hour: bytesToGb(row.taught.bytesPerHour),
            requests_per_hour: row.taught.requestsPerHour,
            until: toIso(row.taught.until),
          },
  };
}
