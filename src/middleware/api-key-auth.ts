import { createMiddleware } from "hono/factory";
import { database } from "../db/client";
import { keyIdForToken } from "../domain/api-keys/api-keys";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";
import { bearerToken } from "./bearer";

/** Resolves `Authorization: Bearer <API_KEY>` to a key id (cached); revocation is the guard's job. */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c);
  const keyId = token ? await keyIdForToken(database(c.env.DB), token) : null;
  if (!keyId) throw new ApiError("unauthorized");
  c.set("keyId", keyId);
  await next();
});
