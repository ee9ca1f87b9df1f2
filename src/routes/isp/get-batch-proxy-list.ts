import { type RouteHandler, z } from "@hono/zod-openapi";
import { batchProxies } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute } from "../../platform/route-definitions";
import { batchIdParam } from "../../resources/isp-batch";
import { protocolOnlyWithUrl, proxyListContent, proxyListFormatQuery, sendProxyList } from "../../resources/proxy-list";

const query = z.strictObject(proxyListFormatQuery).superRefine(protocolOnlyWithUrl);

export const route = apiRoute({
  operationId: "getIspBatchProxyList",
  method: "get",
  path: "/isp/batches/{id}/proxy-list",
  tags: ["ISP"],
  summary: "Download a batch's proxy list",
  description:
    "The batch's assigned IPs as proxy lines, in the formats of a sub-user's proxy list, as a file to save: each " +
    "IP on its own port (8000: HTTP, HTTPS and SOCKS5) with the batch's user and password, which the batch keeps " +
    "sealed and so can list. The CSV adds `country,city,asn`. Empty while the batch is provisioning. The password " +
    "lets its holder use (and spend on) the IPs, so this read needs `isp:write`, like `GET /isp/batches/{id}/ips`.",
  scope: { access: "write" },
  request: { params: batchIdParam, query },
  secret: true,
  download: true,
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: {
    200: proxyListContent("The list: `text/plain` for `txt` and `url`, `text/csv` for `csv`.", {
      txt: "100.64.0.1:8000:user_s1a2b3c4d5e:Xy7Qw2Er9Ty1Ui3Op5As8Df",
      csv: "host,port,username,password,country,city,asn\r\n100.64.0.1,8000,user_s1a2b3c4d5e,Xy7Qw2Er9Ty1Ui3Op5As8Df,US,newyork,7922",
    }),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { batch, entries } = await batchProxies(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  const { format, protocol } = c.req.valid("query");
  return sendProxyList(c, entries, { format, protocol, columns: ["country", "city", "asn"], name: batch.id });
};
