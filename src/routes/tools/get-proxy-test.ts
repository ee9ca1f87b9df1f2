import { type RouteHandler, z } from "@hono/zod-openapi";
import { findProxyTest } from "../../domain/tools/proxy-tests";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentProxyTest, proxyTestSchema } from "../../resources/proxy-test";

const params = z.object({ id: idParam("proxyTest").openapi({ param: { name: "id", in: "path" } }) });

export const route = apiRoute({
  operationId: "getProxyTest",
  method: "get",
  path: "/tools/proxy-tests/{id}",
  tags: ["Tools"],
  boundKeys: true,
  summary: "Get a proxy test run",
  description: "One run of the last 24 hours; older runs are gone (404 `proxy_test_not_found`).",
  request: { params },
  errors: ["invalid_request", "proxy_test_not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(proxyTestSchema, "The test run.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const record = await findProxyTest(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentProxyTest(record), 200);
};
