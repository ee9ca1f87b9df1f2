import type { DomainContext, Principal } from "./domain/context";
import type { NodeCaller } from "./domain/gateway/node-credentials";
import type { Caller } from "./domain/members/sessions";

export interface AppEnv {
  Bindings: Cloudflare.Env;
  Variables: {
    requestId: string;
    /** The database and bindings every domain verb takes. */
    ctx: DomainContext;
    /** Who the request authenticated as, before its guard admits it: an API key, or a member's session. */
    caller: Caller;
    /** false when the API key is a sandbox (`test_`) key. */
    livemode: boolean;
    principal: Principal;
    /** Set when a response is a stored idempotent replay. */
    replayed: boolean;
    /** On the gateway contract: the node calling with its own credential; null: the fleet's shared token. */
    gatewayCaller: NodeCaller | null;
  };
}
