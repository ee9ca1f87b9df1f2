import { type RouteHandler, z } from "@hono/zod-openapi";
import { DEFAULT_PROXY_TEST_TARGET, runProxyTest } from "../../domain/tools/proxy-tests";
import type { AppEnv } from "../../env";
import { text, token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { presentProxyTest, proxyTestSchema } from "../../resources/proxy-test";

function isProxyTarget(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
}

const body = z
  .strictObject({
    // ≤ 255 ASCII characters: the most RFC 1929 (SOCKS5) can carry; a colon would end a Basic username.
    username: token(/^[!-9;-~]+$/, 255, "must be printable ASCII without spaces or colons").openapi({
      description: "The full gateway username (spec §2.13).",
    }),
    password: token(/^[!-~]+$/, 255, "must be printable ASCII without spaces").openapi({
      description: "The sub-user's gateway password: used once, never logged or kept.",
    }),
    protocol: z
      .enum(["http", "socks5"])
      .default("http")
      .openapi({ description: "How to reach the gateway: HTTP CONNECT (default) or SOCKS5." }),
    target: text(2048, 1)
      .refine(isProxyTarget, "must be an http(s) URL without credentials")
      .optional()
      .openapi({
        description: `The URL to request through the gateway. Default: the gateway's echo endpoint (${DEFAULT_PROXY_TEST_TARGET}), which answers with the exit and uses no credit.`,
      }),
  })
  .openapi("ProxyTestRequest", {
    example: {
      username: "user_s1a2b3c4d5e-type-res-region-us-state-ca-city-la",
      password: "q3XvLr8TmWc2Zp9AbN4sKd7HfJ1uYe6G",
    },
  });

export const route = apiRoute({
  operationId: "runProxyTest",
  method: "post",
  path: "/tools/proxy-test",
  tags: ["Tools"],
  boundKeys: true,
  summary: "Test gateway credentials",
  description:
    "Makes one real request through the gateway with these credentials, as a client would, and reports what the " +
    "gateway answered: `auth_ok` (false on 407), the exit IP, geo and ASN, the time of each phase, and how the " +
    "username parses. Other refusals carry the gateway's status and `error_code` (its `X-Service-Error-Code`). A " +
    "username the gateway cannot parse is answered at once with its 400 code, without connecting. The sub-user must " +
    "belong to the key's account (else 404 `subuser_not_found`). The password is never logged or kept; the run is " +
    "kept 24 hours (`GET /tools/proxy-tests`).",
  request: { body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch"],
  responses: { 201: jsonContent(proxyTestSchema, "The test run.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const record = await runProxyTest(c.get("ctx"), c.get("principal"), c.req.valid("json"));
  return c.json(presentProxyTest(record), 201);
};
