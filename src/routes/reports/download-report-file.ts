import type { Context } from "hono";
import { verifyDownloadLink } from "../../domain/reports/download-link";
import { openRunFile } from "../../domain/reports/runs";
import type { AppEnv } from "../../env";

/**
 * `GET /v1/reports/runs/{id}/download?exp=…&sig=…`: the signed link of a run's file, served without an API key
 * (mounted before API-key auth, like the Postman collection). 403 `download_link_invalid` for a link we did not
 * sign, 410 `download_link_expired` after its hour; the file is streamed from R2, never cached.
 */
export async function downloadReportFile(c: Context<AppEnv>): Promise<Response> {
  const runId = c.req.param("id") ?? "";
  await verifyDownloadLink(c.env, runId, { exp: c.req.query("exp") ?? "", sig: c.req.query("sig") ?? "" });
  const file = await openRunFile(c.var.ctx, runId);
  const headers = new Headers();
  file.object.writeHttpMetadata(headers);
  headers.set("Content-Length", String(file.object.size));
  headers.set("Content-Disposition", `attachment; filename="${file.fileName}"`);
  headers.set("Cache-Control", "private, no-store");
  headers.set("X-Request-Id", c.var.requestId);
  return new Response(file.object.body, { status: 200, headers });
}
