import { type RouteHandler, z } from "@hono/zod-openapi";
import { MAX_SESSTIME_MINUTES } from "../../domain/gateway/username";
import { startSession } from "../../domain/sandbox/sessions";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { countryCode, id, idParam, integer, ipText, text, timestamp, token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { bandwidthProductSchema } from "../../resources/vocabulary";
import { tags } from "./shared";

const body = z
  .strictObject({
    subuser: idParam("subuser"),
    product: bandwidthProductSchema.default("residential"),
    region: countryCode()
      .transform((code) => code.toLowerCase())
      .default("us"),
    state: token(/^[a-z0-9]{1,3}$/, 3).optional(),
    city: token(/^[a-z0-9]{1,40}$/, 40).optional(),
    asn: integer(1, 4_294_967_295).optional(),
    session_id: token(/^[a-z0-9]{1,32}$/, 32),
    sesstime: integer(1, MAX_SESSTIME_MINUTES.mobile).openapi({
      description: "Minutes: 1-30 residential, 1-60 mobile (the gateway's grammar).",
    }),
    requests: integer(0, 100)
      .default(1)
      .openapi({ description: "Requests reported on the session, on its exit. Default 1." }),
    bytes_per_request: integer(1, 100_000_000).default(50_000),
  })
  .openapi("TestSessionCreate", {
    example: { subuser: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", region: "us", session_id: "abc123", sesstime: 10 },
  });

const result = z
  .object({
    id: id("session"),
    subuser: id("subuser"),
    username: text(512, 1).openapi({ description: "The full gateway username: the session key." }),
    exit_ip: ipText(),
    started_at: timestamp(),
    expires_at: timestamp(),
  })
  .openapi("TestSession");

export const route = apiRoute({
  operationId: "startTestSession",
  method: "post",
  path: "/test-helpers/sessions",
  tags,
  sandboxOnly: true,
  boundKeys: true,
  scope: { area: "traffic" },
  summary: "Start a sticky session (sandbox)",
  description:
    "As if a gateway node served the sub-user's username with these session segments and its password: the " +
    "sub-user's gate decides the username, and the session follows the node's rules (its exit is a simulated " +
    "TEST-NET-3 address given by the username and how often a session of it was terminated). The live session of " +
    "that exact username is reused, else one starts now; it is listed in the sessions API at once, and the " +
    "`requests` requests reported on it count within seconds. After `DELETE /{product}/sessions/{id}`, the next " +
    "call starts a new session with a new exit. A decision the gateway would refuse (e.g. 402 " +
    "`bandwidth-exhausted`: buy bandwidth first) is 409 `gateway_refused`. Sandbox keys only.",
  request: { body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "gateway_refused"],
  responses: { 201: jsonContent(result, "The session.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { subuser, username, session } = await startSession(c.get("ctx"), c.get("principal"), {
    subuserId: input.subuser,
    product: input.product,
    region: input.region,
    state: input.state,
    city: input.city,
    asn: input.asn,
    sessionId: input.session_id,
    sesstime: input.sesstime,
    requests: input.requests,
    bytesPerRequest: input.bytes_per_request,
  });
  return c.json(
    {
      id: session.id,
      subuser: subuser.id,
      username,
      exit_ip: session.exitIp,
      started_at: toIso(session.startedAt),
      expires_at: toIso(session.expiresAt),
    },
    201,
  );
};
