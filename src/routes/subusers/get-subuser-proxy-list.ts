import { type RouteHandler, z } from "@hono/zod-openapi";
import { MAX_ASN, MAX_SESSTIME_MINUTES, SEGMENT_VALUE } from "../../domain/gateway/username";
import { DEFAULT_SESSTIME_MINUTES, DEFAULT_STICKY_LINES, subuserProxyList } from "../../domain/subusers/proxy-list";
import type { AppEnv } from "../../env";
import { isCountryCode } from "../../platform/countries";
import { countryCode, queryInteger, token } from "../../platform/fields";
import { apiRoute } from "../../platform/route-definitions";
import {
  MAX_PROXY_LIST_LINES,
  protocolOnlyWithUrl,
  proxyListContent,
  proxyListFormatQuery,
  sendProxyList,
} from "../../resources/proxy-list";
import { subuserIdParam } from "../../resources/subuser";
import { bandwidthProductSchema } from "../../resources/vocabulary";

const LONGEST_SESSTIME = Math.max(...Object.values(MAX_SESSTIME_MINUTES));

// Strict: a misspelt parameter (`sesion=sticky`) would otherwise answer a list other than the one asked for, and a
// `password` sent here is refused, not quietly taken into URLs and logs.
const query = z
  .strictObject({
    product: bandwidthProductSchema.optional().openapi({
      description: "`residential` or `mobile`, one of the sub-user's products; needed only when it has both.",
    }),
    country: countryCode()
      .refine(isCountryCode, "must be an ISO 3166-1 alpha-2 code")
      .openapi({ description: "The exit country (`region` in the username)." }),
    state: token(SEGMENT_VALUE.state, 3)
      .optional()
      .openapi({ description: "The ISO 3166-2 subdivision suffix, e.g. `ca`.", example: "ca" }),
    city: token(SEGMENT_VALUE.city, 40).optional().openapi({
      description: "With `state`: the city, letters and digits, e.g. `losangeles`.",
      example: "losangeles",
    }),
    asn: queryInteger(1, MAX_ASN).optional().openapi({ description: "The exit network's ASN.", example: 7922 }),
    session: z
      .enum(["rotating", "sticky"])
      .default("rotating")
      .openapi({
        description:
          "`rotating` (default): one line; every new connection through it gets a new exit IP. `sticky`: `count` " +
          "lines, each with its own random session id, keeping its exit IP for `sesstime` minutes.",
      }),
    count: queryInteger(1, MAX_PROXY_LIST_LINES)
      .optional()
      .openapi({ description: `With \`sticky\`: how many sessions (lines); default ${DEFAULT_STICKY_LINES}.` }),
    sesstime: queryInteger(1, LONGEST_SESSTIME)
      .optional()
      .openapi({
        description:
          `With \`sticky\`: each session's minutes, up to ${MAX_SESSTIME_MINUTES.residential} (residential) or ` +
          `${MAX_SESSTIME_MINUTES.mobile} (mobile); default ${DEFAULT_SESSTIME_MINUTES}.`,
      }),
    ...proxyListFormatQuery,
  })
  .superRefine((value, context) => {
    if (value.city !== undefined && value.state === undefined) {
      context.addIssue({ code: "custom", path: ["city"], message: "needs state" });
    }
    for (const field of ["count", "sesstime"] as const) {
      if (value[field] !== undefined && value.session !== "sticky") {
        context.addIssue({ code: "custom", path: [field], message: "only with session=sticky" });
      }
    }
    protocolOnlyWithUrl(value, context);
  });

const USERNAME = "user_s1a2b3c4d5e-type-res-region-us-session-k3v9q2m7xa-sesstime-10";

export const route = apiRoute({
  operationId: "getSubuserProxyList",
  method: "get",
  path: "/subusers/{id}/proxy-list",
  tags: ["Sub-users"],
  boundKeys: true,
  summary: "Download a sub-user's proxy list",
  description:
    "Ready-made proxy lines for the sub-user: the gateway's host and port and gateway usernames for the chosen " +
    "geo and session type, one per line, as a file to save. The API keeps only a hash of the password, so each " +
    "line carries the literal `PASSWORD` where the password goes: replace it with the password shown at creation " +
    "or rotation (the API never takes a password in a URL). Sticky session ids are random, so every download is a " +
    "new set of sessions.",
  request: { params: subuserIdParam, query },
  download: true,
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch"],
  responses: {
    200: proxyListContent("The list: `text/plain` for `txt` and `url`, `text/csv` for `csv`.", {
      txt: `gateway.example.com:7777:${USERNAME}:PASSWORD`,
      csv: `host,port,username,password,session_id,sesstime\r\ngateway.example.com,7777,${USERNAME},PASSWORD,k3v9q2m7xa,10`,
    }),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { format, protocol, ...request } = c.req.valid("query");
  const list = await subuserProxyList(c.get("ctx"), c.get("principal"), c.req.valid("param").id, request);
  const name = [list.subuser.label, list.product, request.country.toLowerCase(), request.session].join("-");
  return sendProxyList(c, list.entries, { format, protocol, columns: ["session_id", "sesstime"], name });
};
