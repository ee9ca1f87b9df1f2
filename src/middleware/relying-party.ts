import type { Context } from "hono";
import type { RelyingParty } from "../domain/members/passkeys";
import type { AppEnv } from "../env";

/**
 * The passkeys' relying party: the origin the request reached (the console is served from the API's own origin,
 * so the passkeys a member adds there are bound to its host).
 */
export function relyingParty(c: Context<AppEnv>): RelyingParty {
  return { origin: new URL(c.req.url).origin, name: "Proxy Account API" };
}
