import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** Request bodies on writes are JSON (spec §1): a body of another type, or malformed JSON, is a 400. */
export const jsonBody = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const body = await c.req.text();
    if (body.length > 0) {
      const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0]?.trim() ?? "";
      if (!JSON_MEDIA_TYPE.test(mediaType)) {
        throw new ApiError("invalid_json", "Request bodies must be JSON, sent with Content-Type: application/json.");
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new ApiError("invalid_json");
      }
      // Hono's json() parses the text again for every reader (the validator, a handler): they get this parse.
      c.req.json = async () => parsed as never;
    }
  }
  await next();
});
