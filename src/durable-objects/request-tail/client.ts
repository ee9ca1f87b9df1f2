import type { TailFilter, TailRecord } from "./contract";
import { FILTER_HEADER, type RequestTail } from "./request-tail";

/** The typed client of an account's `RequestTail`. */
export class RequestTailClient {
  readonly #stub: DurableObjectStub<RequestTail>;

  constructor(env: Cloudflare.Env, accountId: string) {
    this.#stub = env.REQUEST_TAIL.get(env.REQUEST_TAIL.idFromName(accountId));
  }

  /** Opens a tail: the viewer's end of its WebSocket, or null with the tails open when the account has its maximum. */
  async open(filter: TailFilter): Promise<{ webSocket: WebSocket } | { webSocket: null; open: number }> {
    const request = new Request("https://request-tail/open", {
      headers: { Upgrade: "websocket", [FILTER_HEADER]: JSON.stringify(filter) },
    });
    const response = await this.#stub.fetch(request);
    if (response.webSocket) return { webSocket: response.webSocket };
    return { webSocket: null, open: ((await response.json()) as { open: number }).open };
  }

  /** Hands the account's newly arrived records to its tails: how many tails are open. */
  deliver(records: TailRecord[]): Promise<number> {
    return this.#stub.deliver(records);
  }
}
