/**
 * The Postman collection as the Worker serves it: a static asset, built with the others (`scripts/docs-assets.mjs`
 * writes every API version's collection to `public/` at the path it is served at), answered with the request's
 * origin in its `baseUrl`. Nothing of the scenario runs here: it is generated and checked at build time
 * (`postman.ts`).
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";

/**
 * The origin of the built collection's `baseUrl`, the one place it appears in the file: the request's origin
 * replaces it when the collection is served. A `.invalid` name never resolves.
 */
export const BUILT_ORIGIN = "https://origin.invalid";

/** Where a version's collection is served, and where it is built under `public/`. */
export function collectionPath(version: string): string {
  return `/${version}/postman/collection.json`;
}

/** The built collection of `version`, from the static assets, for the request's origin. */
export async function servePostmanCollection(c: Context<AppEnv>, version: string): Promise<Response> {
  const { origin } = new URL(c.req.url);
  const asset = await c.env.ASSETS.fetch(new URL(collectionPath(version), origin));
  if (!asset.ok) {
    throw new ApiError("internal_error", `The Postman collection of ${version} is missing from the static assets.`);
  }
  const text = (await asset.text()).replace(BUILT_ORIGIN, () => JSON.stringify(origin).slice(1, -1));
  return c.body(text, 200, { "Content-Type": "application/json" });
}
