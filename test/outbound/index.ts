/**
 * The tests' outside world (runs in Node, as miniflare's `outboundService`): every `fetch` a worker makes in a test
 * lands here. Fakes are chosen by host; anything else is refused with 599, so no test can reach the network.
 *
 * A fake is a Node-side function of the request. Tests inside workerd read what a fake received by fetching it too
 * (a fake may expose e.g. `GET https://<host>/__received`).
 */
import { cloudFake } from "./cloud";
import { RECEIVER_DOMAIN, receiver } from "./receiver";

export type OutboundFake = (request: Request) => Promise<Response> | Response;

/** Host suffix → fake. Add a line per fake (each in its own file under `test/outbound/`). */
const fakes: Array<[hostSuffix: string, fake: OutboundFake]> = [
  [RECEIVER_DOMAIN, receiver],
  ["cloud.test", cloudFake],
];

export async function outboundService(request: Request): Promise<Response> {
  const { hostname } = new URL(request.url);
  const match = fakes.find(([suffix]) => hostname === suffix || hostname.endsWith(`.${suffix}`));
  if (!match) return new Response("outbound requests are blocked in tests", { status: 599 });
  return match[1](request);
}
