import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { postmanCollection } from "../../openapi/postman";
import { apiRoute, jsonContent } from "../../platform/openapi";

export const route = apiRoute({
  method: "get",
  path: "/postman/collection.json",
  tags: ["Tools"],
  summary: "Postman collection",
  description: "A Postman v2.1 collection of the public API, generated from the same OpenAPI document.",
  responses: { 200: jsonContent(z.object({}).passthrough().openapi("PostmanCollection"), "The collection file.") },
});

/** The handler needs the whole API's OpenAPI document, which only the assembled app can give. */
export function handler(document: (origin: string) => unknown) {
  return (c: Context<AppEnv>) => {
    const origin = new URL(c.req.url).origin;
    return c.json(postmanCollection(document(origin), `${origin}/v1`), 200);
  };
}
