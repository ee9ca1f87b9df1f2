import { type RouteHandler, z } from "@hono/zod-openapi";
import { MAX_TRAFFIC_ROWS, queryTraffic, TRAFFIC_ORDERS } from "../../domain/traffic/traffic";
import type { GroupBy } from "../../durable-objects/traffic-store/contract";
import type { AppEnv } from "../../env";
import { idParam, instant, queryInteger, token } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentTraffic, trafficSchema } from "../../resources/traffic";
import { productSchema } from "../../resources/vocabulary";

const GROUPS = ["subuser", "region", "asn", "tag", "day", "hour", "ip", "domain", "status", "error_code"] as const;

const query = z.object({
  from: instant().openapi({ description: "Start of the range (RFC 3339 or a date), inclusive." }),
  to: instant().openapi({ description: "End of the range, exclusive; at most 90 days after `from`." }),
  group_by: z
    .string()
    .max(16)
    .refine((value) => (GROUPS as readonly string[]).includes(value), {
      error: `must be one of ${GROUPS.join(", ")} (ip for isp only)`,
      params: { code: "invalid_group_by" },
    })
    .optional()
    .openapi({
      enum: [...GROUPS],
      description:
        "Without it, one total row. `ip` is for `isp` only. `domain` groups by the registrable domain (eTLD+1) of " +
        "the target host and combines with no filter. `status` (the HTTP status the client got) and `error_code` " +
        "(the gateway's code of a failed request) are extensions to the spec.",
    }),
  order_by: z
    .enum(TRAFFIC_ORDERS)
    .optional()
    .openapi({
      description:
        "Grouped rows heaviest first by this metric (`bytes`: in + out), ties in the grouping's key order; without " +
        "it, rows come in key order. Extension to the spec.",
    }),
  limit: queryInteger(1, MAX_TRAFFIC_ROWS)
    .optional()
    .openapi({
      description: `Grouped rows, 1-${MAX_TRAFFIC_ROWS}: only the first ones (after \`order_by\`); without it, every row. Extension to the spec.`,
    }),
  labels: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "`true`: rows grouped by `subuser` carry the sub-user's `label` (one lookup of the ids answered; a deleted " +
        "sub-user's last label). Off by default, so analytics that need only ids pay nothing for it. Extension to the " +
        "spec.",
    }),
  subuser: idParam("subuser").optional(),
  region: token(/^[A-Za-z]{2}$/, 2, "must be an ISO 3166-1 alpha-2 code")
    .transform((code) => code.toLowerCase())
    .optional(),
  tag: token(/^[a-z0-9_-]{1,64}$/, 64)
    .optional()
    .openapi({ description: "The value of the tag request header." }),
});

export const route = apiRoute({
  operationId: "getTraffic",
  method: "get",
  path: "/{product}/traffic",
  tags: ["Traffic"],
  boundKeys: true,
  summary: "Traffic analytics",
  description:
    "Bytes in and out, requests and errors over `[from, to)`, in total or grouped, optionally filtered. Numbers are " +
    "exact sums of the usage the gateway reported. The answer's `resolution` follows the age of `from` (1 minute " +
    "under 24 h, 5 minutes to 14 days, 1 hour to 90 days, 1 day beyond) and the range is widened to whole units of " +
    "it. Mobile rows grouped by `asn` carry `carrier_name`; ISP traffic can be grouped per `ip`. A key bound to " +
    "sub-users reads their traffic alone: unfiltered totals and groups cover its sub-users, and `group_by=domain` " +
    "(summed over every sub-user) is 403 `subuser_binding`. " +
    "Grouped by `domain` (the registrable domain of the target host, `a.b.example.co.uk` → `example.co.uk`; an IP " +
    "address target is `(ip)`, a host without one `(none)`), each time bucket keeps its 100 heaviest domains and " +
    "adds the rest to `(other)`, and the answer lists the 100 heaviest domains of the range (bytes in + out) then " +
    "`(other)` with the rest: the rows always sum exactly to the ungrouped total. " +
    "Grouped by `status`, a row per HTTP status the client got (failed requests' included); usage reported " +
    "before statuses were kept has `status: null`. Grouped by `error_code`, a row per gateway error code of the " +
    "failed requests (usage reported before codes were kept is left out). Both are exact sums from the same rows as " +
    "every other grouping, with the same filters. `order_by` and `limit` make a top table in one call (e.g. " +
    "`group_by=subuser&order_by=bytes&limit=10`); with `labels=true`, rows grouped by `subuser` carry the " +
    "sub-user's `label`. " +
    "Usage counts here within 60 seconds of the gateway reporting it (it is batched per account for up to 55 s, so " +
    "that counting costs a few rows per account-minute rather than per request); a request reported late counts in " +
    "the minute it was made, whenever it arrives.",
  request: { params: z.object({ product: productSchema }), query },
  errors: [
    "invalid_request",
    "range_too_wide",
    "invalid_group_by",
    "subuser_not_found",
    "subuser_scope_mismatch",
    "subuser_binding",
  ],
  responses: { 200: jsonContent(trafficSchema, "The traffic.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { product } = c.req.valid("param");
  const { from, to, group_by, subuser, region, tag, order_by, limit, labels } = c.req.valid("query");
  const groupBy = (group_by ?? null) as GroupBy | null;
  const answer = await queryTraffic(c.get("ctx"), c.get("principal"), {
    product,
    from,
    to,
    groupBy,
    subuserId: subuser,
    region,
    tag,
    orderBy: order_by,
    limit,
    labels: labels === "true",
  });
  return c.json(presentTraffic(answer, groupBy), 200);
};
