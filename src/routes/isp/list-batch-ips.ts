import { type RouteHandler, z } from "@hono/zod-openapi";
import { txtLine } from "../../domain/gateway/proxy-lines";
import { batchProxies } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { countryCode, integer, ipText, lines, list, token } from "../../platform/fields";
import { apiRoute } from "../../platform/route-definitions";
import { batchIdParam } from "../../resources/isp-batch";

const ipLine = z
  .object({
    ip_id: token(/^ip_[0-9A-Za-z]+$/, 40).openapi({ description: "For `POST /isp/ips/{ip_id}/replace`." }),
    ip: ipText(),
    port: integer(1, 65_535),
    user: token(/^[a-z0-9]+_[a-z0-9]+$/, 64),
    pass: token(/^[0-9A-Za-z]+$/, 64),
    country: countryCode(),
    city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
    asn: integer(1, 4_294_967_295),
  })
  .openapi("IspProxyLine");

export const route = apiRoute({
  operationId: "listIspBatchIps",
  method: "get",
  path: "/isp/batches/{id}/ips",
  tags: ["ISP"],
  summary: "List a batch's IPs with credentials",
  description:
    "`plain`: `ip:port:user:pass` per line. `csv`: header `ip,port,user,pass,country,city,asn`. `json` (default): " +
    "an array of objects (with `ip_id` for replacements). Every IP listens on port 8000 for HTTP, HTTPS and SOCKS5; " +
    "user and password are the batch's. The password lets its holder use (and spend on) the IPs, so this read " +
    "needs `isp:write`, like rotating it.",
  scope: { access: "write" },
  request: { params: batchIdParam, query: z.object({ format: z.enum(["plain", "csv", "json"]).default("json") }) },
  secret: true,
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: {
    200: {
      description: "The batch's assigned IPs in the requested format.",
      content: {
        "application/json": { schema: list(ipLine, 5000) },
        "text/plain": {
          schema: lines(500_000).openapi({ example: "100.64.0.1:8000:user_s1a2b3c4d5e:Xy7Qw2Er9Ty1Ui3Op5As8Df" }),
        },
        "text/csv": {
          schema: lines(600_000).openapi({
            example:
              "ip,port,user,pass,country,city,asn\n100.64.0.1,8000,user_s1a2b3c4d5e,Xy7Qw2Er9Ty1Ui3Op5As8Df,US,newyork,7922",
          }),
        },
      },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { entries } = await batchProxies(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  const proxies = entries.map((entry) => ({
    ip_id: entry.ipId,
    ip: entry.host,
    port: entry.port,
    user: entry.username,
    pass: entry.password,
    ...entry.columns,
  }));
  switch (c.req.valid("query").format) {
    case "plain":
      return c.text(entries.map(txtLine).join("\n"), 200);
    case "csv": {
      const rows = proxies.map((l) => [l.ip, l.port, l.user, l.pass, l.country, l.city ?? "", l.asn].join(","));
      return c.body(["ip,port,user,pass,country,city,asn", ...rows].join("\n"), 200, {
        "Content-Type": "text/csv; charset=utf-8",
      });
    }
    default:
      return c.json(proxies, 200);
  }
};
