import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { batchCredentials, batchIps, findBatch } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute } from "../../platform/openapi";
import { batchIdParam } from "../../schemas/commerce";

const ipLine = z
  .object({
    ip_id: z.string().openapi({ description: "For `POST /isp/ips/{ip_id}/replace`." }),
    ip: z.string(),
    port: z.number().int(),
    user: z.string(),
    pass: z.string(),
    country: z.string(),
    city: z.string().nullable(),
    asn: z.number().int(),
  })
  .openapi("IspProxyLine");

export const route = apiRoute({
  method: "get",
  path: "/isp/batches/{id}/ips",
  tags: ["ISP"],
  summary: "List a batch's IPs with credentials",
  description:
    "`plain`: `ip:port:user:pass` per line. `csv`: header `ip,port,user,pass,country,city,asn`. `json` (default): " +
    "an array of objects (with `ip_id` for replacements). Every IP listens on port 8000 for HTTP, HTTPS and SOCKS5; user and password are the batch's.",
  request: {
    params: batchIdParam,
    query: z.object({ format: z.enum(["plain", "csv", "json"]).default("json") }),
  },
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: {
    200: {
      description: "The batch's IPs in the requested format.",
      content: {
        "application/json": { schema: z.array(ipLine) },
        "text/plain": { schema: z.string().openapi({ example: "100.64.0.1:8000:user_s1a2b3c4d5e:Xy…" }) },
        "text/csv": { schema: z.string().openapi({ example: "ip,port,user,pass,country,city,asn\n…" }) },
      },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const ctx = domainContext(c.env);
  const batch = await findBatch(ctx, c.var.principal, c.req.valid("param").id);
  const { user, password } = await batchCredentials(ctx, batch);
  const lines = (await batchIps(ctx, batch.id)).map((ip) => ({
    ip_id: ip.id,
    ip: ip.ip,
    port: ip.port,
    user,
    pass: password,
    country: ip.country,
    city: ip.city,
    asn: ip.asn,
  }));
  c.header("Cache-Control", "no-store");
  switch (c.req.valid("query").format) {
    case "plain":
      return c.text(lines.map((l) => `${l.ip}:${l.port}:${l.user}:${l.pass}`).join("\n"), 200);
    case "csv": {
      const rows = lines.map((l) => [l.ip, l.port, l.user, l.pass, l.country, l.city ?? "", l.asn].join(","));
      return c.body(["ip,port,user,pass,country,city,asn", ...rows].join("\n"), 200, {
        "Content-Type": "text/csv; charset=utf-8",
      });
    }
    default:
      return c.json(lines, 200);
  }
};
