import { z } from "@hono/zod-openapi";
import type { GatewayNodeCredentialRow } from "../db/schema";
import { NODE_TOKEN_PATTERN } from "../domain/gateway/node-credentials";
import { toIso } from "../platform/clock";
import { id, timestamp, token } from "../platform/fields";

/** A node's stable id, as it names itself on the gateway contract. */
export const nodeId = () =>
  token(/^[a-z0-9-]{1,64}$/, 64).openapi({ description: "The gateway node's own stable id.", example: "node-1" });

export const gatewayNodeCredentialSchema = z
  .object({
    id: id("gatewayNode"),
    node: nodeId(),
    token_hint: token(/^node_[0-9A-Za-z]{4}$/, 9).openapi({ description: "The token's first characters." }),
    created_at: timestamp(),
    revoked_at: timestamp().nullable().openapi({ description: "From then on the credential answers 401." }),
  })
  .openapi("GatewayNodeCredential");

export const issuedGatewayNodeCredentialSchema = gatewayNodeCredentialSchema
  .extend({ token: token(NODE_TOKEN_PATTERN, 69).openapi({ description: "Shown once." }) })
  .openapi("IssuedGatewayNodeCredential");

export function presentGatewayNodeCredential(row: GatewayNodeCredentialRow) {
  return {
    id: row.id,
    node: row.node,
    token_hint: row.tokenHint,
    created_at: toIso(row.createdAt),
    revoked_at: row.revokedAt === null ? null : toIso(row.revokedAt),
  };
}
