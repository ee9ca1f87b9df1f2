import type { ChannelCredential, KeyReview } from "../shared/channel-credentials";
import type { TailFilter, TailRecord } from "./contract";
import { CREDENTIAL_HEADER, FILTER_HEADER, type RequestTail } from "./request-tail";

/** The typed client of an account's `RequestTail`. */
export class RequestTailClient {
  readonly #stub: DurableObjectStub<RequestTail>;

  constructor(env: Cloudflare.Env, accountId: string) {
    this.#stub = env.REQUEST_TAIL.get(env.REQUEST_TAIL.idFromName(accountId));
  }

  /**
   * Opens a tail that lives no longer than the key's credential: the viewer's end of its WebSocket, or null with
   * the tails open when the account has its maximum.
   */
  async open(
    filter: TailFilter,
    credential: ChannelCredential,
  ): Promise<{ webSocket: WebSocket } | { webSocket: null; open: number }> {
    const request = new Request("https://request-tail/open", {
      headers: {
        Upgrade: "websocket",
        [FILTER_HEADER]: JSON.stringify(filter),
        [CREDENTIAL_HEADER]: JSON.stringify(credential),
      },
    });
    const response = await this.#stub.fetch(request);
    if (response.webSocket) return { webSocket: response.webSocket };
    return { webSocket: null, open: ((await response.json()) as { open: number }).open };
  }

  /** Hands the account's newly arrived records to its tails: how many tails are open. */
  deliver(records: TailRecord[]): Promise<number> {
    return this.#stub.deliver(records);
  }

  /** Tells the tails of a key what the key is now: those it no longer covers close at once. */
  reviewKey(keyId: string, review: KeyReview): Promise<void> {
    return this.#stub.reviewKey(keyId, review);
  }
}
