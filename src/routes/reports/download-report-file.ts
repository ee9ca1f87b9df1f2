import { type RouteHandler, z } from "@hono/zod-openapi";
import { verifyDownloadLink } from "../../domain/reports/download-link";
import { contentTypes } from "../../domain/reports/formats";
import { openRunFile } from "../../domain/reports/runs";
import type { AppEnv } from "../../env";
import { text } from "../../platform/fields";
import { signedLinkRoute } from "../../platform/route-definitions";

// The link is checked by its signature, not by the shapes of its parts: any tampering answers 403 alike.
const linkParams = z.object({
  id: text(64).openapi({ param: { name: "id", in: "path" }, example: "run_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
});
const linkQuery = z.object({
  exp: text(20).optional().openapi({ description: "When the link expires, Unix seconds (signed)." }),
  sig: text(128).optional().openapi({ description: "The link's signature." }),
});

/** R2's largest object, 5 TiB: a file's bound (its size is `Content-Length`). */
const R2_MAX_OBJECT_BYTES = 5 * 1024 ** 4;
const file = z.string().max(R2_MAX_OBJECT_BYTES).openapi({ format: "binary", description: "The report file." });

export const route = signedLinkRoute({
  operationId: "downloadReportRunFile",
  method: "get",
  path: "/reports/runs/{id}/download",
  tags: ["Reports"],
  summary: "Download a report run's file",
  description:
    "The `download_url` of a run (from `GET /reports/runs/{id}`, a report mail or a webhook delivery): signed, " +
    "valid for 1 hour, and needs no API key, so it can be handed to a browser or a script. Served without " +
    "caching, as an attachment. A link we did not sign is 403 `download_link_invalid`; an expired one is 410 " +
    "`download_link_expired` (get a fresh one from `GET /reports/runs/{id}`). It keeps working after its API " +
    "version's sunset until it expires. Downloads count against the client address's window (60 a minute, " +
    "1,000 a day), like calls without an API key.",
  request: { params: linkParams, query: linkQuery },
  errors: ["download_link_invalid", "download_link_expired", "report_run_not_found"],
  responses: {
    200: {
      description: "The file, in the report's format.",
      content: Object.fromEntries(Object.values(contentTypes).map((type) => [type, { schema: file }])),
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { exp = "", sig = "" } = c.req.valid("query");
  await verifyDownloadLink(c.env, id, { exp, sig });
  const found = await openRunFile(c.get("ctx"), id);
  const headers = new Headers();
  found.object.writeHttpMetadata(headers);
  headers.set("Content-Length", String(found.object.size));
  headers.set("Content-Disposition", `attachment; filename="${found.fileName}"`);
  headers.set("Cache-Control", "no-store");
  headers.set("X-Request-Id", c.get("requestId"));
  return c.body(found.object.body, 200, Object.fromEntries(headers));
};
