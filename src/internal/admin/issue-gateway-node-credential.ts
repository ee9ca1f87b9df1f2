import { type RouteHandler, z } from "@hono/zod-openapi";
import { issueNodeCredential, MAX_LIVE_CREDENTIALS_PER_NODE } from "../../domain/gateway/node-credentials";
import type { AppEnv } from "../../env";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { issuedGatewayNodeCredentialSchema, nodeId, presentGatewayNodeCredential } from "../../resources/gateway-node";
import { tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminIssueGatewayNodeCredential",
    method: "post",
    path: "/gateway-nodes",
    tags,
    summary: "Issue a gateway node's credential",
    description:
      "A credential of the node's own (`node_…`), shown once and stored as a SHA-256 hash. Every claim made with " +
      "it on the gateway contract (leases, slots, sessions, the change feed) is bound to `node`. A node may hold " +
      `${MAX_LIVE_CREDENTIALS_PER_NODE} live credentials, to roll a new one out before revoking the old (422 ` +
      "`over_limit`).",
    request: {
      body: jsonBody(
        z.strictObject({ node: nodeId() }).openapi("GatewayNodeCredentialCreate", { example: { node: "node-1" } }),
      ),
    },
    secret: true,
    errors: ["over_limit"],
    responses: { 201: jsonContent(issuedGatewayNodeCredentialSchema, "The credential, with its token (shown once).") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { credential, token } = await issueNodeCredential(c.get("ctx"), c.req.valid("json").node);
  return c.json({ ...presentGatewayNodeCredential(credential), token }, 201);
};
