import { z } from "@hono/zod-openapi";
import type { OAuthGrantRow } from "../db/schema";
import { toIso } from "../platform/clock";
import { email, id, idParam, text, timestamp } from "../platform/fields";
import { oauthScopes } from "../vocabulary";

export const oauthGrantIdParam = z.object({ id: idParam("oauthGrant") });

export const oauthGrantSchema = z
  .object({
    id: id("oauthGrant"),
    object: z.literal("oauth_grant"),
    client_id: text(200, 1).openapi({ description: "The OAuth client's id (from its dynamic registration)." }),
    client_name: text(200).openapi({ description: "The name the client registered itself under: not verified." }),
    redirect_host: text(255).openapi({ description: "Where the client's authorization was sent." }),
    scopes: z
      .array(z.enum(oauthScopes as [string, ...string[]]))
      .max(oauthScopes.length)
      .openapi({
        description:
          "The scopes the member granted. Each call uses those its role still has: a demotion narrows them at once.",
      }),
    member: z
      .object({ id: id("member"), email: email() })
      .openapi({ description: "The member who granted it, and whom the client acts as." }),
    created_at: timestamp(),
    last_used_at: timestamp()
      .nullable()
      .openapi({ description: "The last call to `/mcp` with its tokens (to the minute); null: never used." }),
  })
  .openapi("OAuthGrant");

export function presentOAuthGrant(grant: OAuthGrantRow & { email: string }): z.infer<typeof oauthGrantSchema> {
  return {
    id: grant.id,
    object: "oauth_grant",
    client_id: grant.clientId,
    client_name: grant.clientName,
    redirect_host: grant.redirectHost,
    scopes: grant.scopes,
    member: { id: grant.memberId, email: grant.email },
    created_at: toIso(grant.createdAt),
    last_used_at: grant.lastUsedAt === null ? null : toIso(grant.lastUsedAt),
  };
}
