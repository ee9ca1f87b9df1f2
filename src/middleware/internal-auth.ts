import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { timingSafeEqual } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { bearerToken } from "./bearer";

/** Guards an internal API with a shared secret from the environment (ADMIN_TOKEN). */
export function internalAuth(secretName: "ADMIN_TOKEN") {
  return createMiddleware<AppEnv>(async (c, next) => {
    const expected = c.env[secretName];
    const token = bearerToken(c);
    if (!expected || !token || !(await timingSafeEqual(token, expected))) {
      throw new ApiError("unauthorized", `A valid ${secretName.replace("_", " ").toLowerCase()} is required.`);
    }
    await next();
  });
}
