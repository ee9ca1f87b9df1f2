import { type RouteHandler, z } from "@hono/zod-openapi";
import { pinNodeSession } from "../../domain/gateway/node-decisions";
import type { AppEnv } from "../../env";
import { callingNode } from "../../middleware/gateway-auth";
import { toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { id, ipAddress, ipText, text, timestamp } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { gatewayName, nodeId } from "./node-fields";

export const route = internalRoute(
  {
    operationId: "pinGatewaySession",
    method: "post",
    path: "/sessions",
    tags: ["Gateway"],
    summary: "A sticky session, for a node",
    description:
      "The active session of that exact username at its sub-user's gate, or a new one; `exit_ip` (the exit the " +
      "node chose) pins a session that has none, so all nodes use one exit. A node asks once per session and keeps " +
      "the answer until `expires_at` or a `session_ended` push. The node has checked the credentials against the " +
      "sub-user's snapshot; an unknown name or a username without session segments is 422.",
    request: {
      body: jsonBody(
        z
          .strictObject({ node: nodeId(), name: gatewayName(), username: text(512, 1), exit_ip: ipAddress() })
          .openapi("GatewaySessionRequest", {
            example: {
              node: "node-1",
              name: "s1a2b3c4d5e",
              username: "user_s1a2b3c4d5e-type-res-region-us-session-abc123-sesstime-10",
              exit_ip: "198.51.100.7",
            },
          }),
      ),
    },
    responses: {
      200: jsonContent(
        z
          .object({
            session: z.object({
              id: id("session"),
              exit_ip: ipText(),
              started_at: timestamp(),
              expires_at: timestamp(),
            }),
          })
          .openapi("GatewaySession"),
        "The session.",
      ),
    },
  },
  "GatewayNode",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { node, name, username, exit_ip: exitIp } = c.req.valid("json");
  callingNode(c, node);
  const answer = await pinNodeSession(c.get("ctx"), { name, username, exitIp });
  if (!answer.ok) {
    throw new ApiError(
      "invalid_request",
      answer.problem === "unknown-subuser"
        ? "There is no sub-user of that name."
        : "The username has no session and sesstime segments of that sub-user.",
    );
  }
  const { session } = answer;
  return c.json(
    {
      session: {
        id: session.id,
        exit_ip: session.exitIp ?? exitIp,
        started_at: toIso(session.startedAt),
        expires_at: toIso(session.expiresAt),
      },
    },
    200,
  );
};
