import type { Context } from "hono";
import type { Caller } from "../domain/members/sessions";
import { liveGrant } from "../domain/oauth/grants";
import { authorizationServer, type GrantProps, mcpResource } from "../domain/oauth/provider";
import type { AppEnv } from "../env";
import { sha256Hex } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { admitClientAddress } from "./api-key-auth";

/**
 * An OAuth access token on `/mcp` (never an API key: those take the key path): the library checks it (its hash in
 * KV, its expiry, its audience: issued for `/mcp` on this origin), then the grant it names is read from D1, where
 * a revocation or the member's removal is in force at once. The caller is the member, through that grant.
 */
export async function oauthTokenAuth(c: Context<AppEnv>, token: string): Promise<void> {
  const origin = new URL(c.req.url).origin;
  const validated = await authorizationServer(origin)
    .validateToken<GrantProps>(mcpResource(origin), token, c.env)
    .catch(() => null);
  const props = validated?.props;
  const found = props?.grantId ? await liveGrant(c.get("ctx"), props.grantId) : null;
  if (!found || found.grant.memberId !== props?.memberId || found.grant.clientId !== validated?.clientId) {
    await admitClientAddress(c);
    throw new ApiError("unauthorized", "The access token is unknown, expired or revoked: authorize again.");
  }
  const { grant, email } = found;
  c.set("caller", {
    kind: "oauth",
    grant: {
      id: grant.id,
      memberId: grant.memberId,
      email,
      accountId: grant.accountId,
      clientId: grant.clientId,
      clientName: grant.clientName,
      scopes: grant.scopes,
      tokenHash: await sha256Hex(token),
    },
  });
  c.set("livemode", true);
}

/**
 * A tool call made through an OAuth grant is the operation's request run through the app with the grant as its
 * caller, handed over in-process: the token itself is not forwarded (it is issued for `/mcp`, and `/v1` refuses
 * it). Only requests made here are in this map, so no request from outside can claim a caller.
 */
const delegatedCallers = new WeakMap<Request, Caller>();

export function delegatedRequest(request: Request, caller: Caller): Request {
  if (caller.kind !== "oauth") return request;
  const inner = new Request(request);
  inner.headers.delete("Authorization");
  delegatedCallers.set(inner, caller);
  return inner;
}

export function delegatedCaller(request: Request): Caller | undefined {
  return delegatedCallers.get(request);
}
