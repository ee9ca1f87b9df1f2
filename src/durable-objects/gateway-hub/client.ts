import type { GatewayPush } from "./contract";
import { CREDENTIAL_HEADER, type GatewayHub, NODE_HEADER } from "./gateway-hub";

/** The one hub all gateway nodes connect to (a single object serves thousands of hibernating sockets). */
const HUB_NAME = "nodes";

/** The typed client of the `GatewayHub`. */
export class GatewayHubClient {
  readonly #stub: DurableObjectStub<GatewayHub>;

  constructor(env: Cloudflare.Env) {
    this.#stub = env.GATEWAY_HUB.get(env.GATEWAY_HUB.idFromName(HUB_NAME));
  }

  /** Hands a node's WebSocket upgrade to the hub, as the node and credential the worker checked. */
  connect(request: Request, caller: { node: string; credentialId: string }): Promise<Response> {
    const headers = new Headers(request.headers);
    headers.set(NODE_HEADER, caller.node);
    headers.set(CREDENTIAL_HEADER, caller.credentialId);
    return this.#stub.fetch(new Request(request.url, { headers }));
  }

  /** Closes the change feeds opened with a (revoked) credential: how many. */
  disconnectCredential(credentialId: string): Promise<number> {
    return this.#stub.disconnectCredential(credentialId);
  }

  /** Whether `node` holds `slot` on an open change feed now. */
  holdsSlot(node: string, slot: number): Promise<boolean> {
    return this.#stub.holdsSlot(node, slot);
  }

  /**
   * Sends a message to every connected node, or to the nodes named: how many it reached, and (sent to all) by when
   * no node uses the standing shares it ended.
   */
  publish(message: GatewayPush, nodes?: string[]): Promise<{ sent: number; standingEndsBy: number }> {
    return this.#stub.publish(JSON.stringify(message), nodes);
  }
}
