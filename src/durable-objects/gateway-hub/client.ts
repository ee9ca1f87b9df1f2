import type { GatewayHub } from "./gateway-hub";

/** The one hub all gateway nodes connect to (a single object serves thousands of hibernating sockets). */
const HUB_NAME = "nodes";

/** The typed client of the `GatewayHub`. */
export class GatewayHubClient {
  readonly #stub: DurableObjectStub<GatewayHub>;

  constructor(env: Cloudflare.Env) {
    this.#stub = env.GATEWAY_HUB.get(env.GATEWAY_HUB.idFromName(HUB_NAME));
  }

  /** Hands a node's WebSocket upgrade to the hub. */
  connect(request: Request): Promise<Response> {
    return this.#stub.fetch(request);
  }

  /**
   * Sends a message to every connected node, or to the nodes named: how many it reached, and (sent to all) by when
   * no node uses the standing shares it ended.
   */
  publish(message: object, nodes?: string[]): Promise<{ sent: number; standingEndsBy: number }> {
    return this.#stub.publish(JSON.stringify(message), nodes);
  }
}
