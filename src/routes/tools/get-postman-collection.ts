import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { OpenApiDocument } from "../../api-docs/document";
import { postmanCollection } from "../../api-docs/postman";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";

export const route = apiRoute({
  operationId: "getPostmanCollection",
  method: "get",
  path: "/postman/collection.json",
  tags: ["Tools"],
  summary: "Postman collection",
  description:
    "A Postman v2.1 collection of the public API, generated from the same OpenAPI document: run it with " +
    "`npx newman run <url> --env-var api_key=<key>`.",
  responses: { 200: jsonContent(z.object({}).passthrough().openapi("PostmanCollection"), "The collection file.") },
});

/** The handler needs the API's OpenAPI document, which only the assembled router can give. */
export function handler(document: (origin: string) => OpenApiDocument) {
  return (c: Context<AppEnv>) => {
    const origin = new URL(c.req.url).origin;
    return c.json(postmanCollection(document(origin), `${origin}/v1`), 200);
  };
}
