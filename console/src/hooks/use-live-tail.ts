import { useEffect, useState } from "preact/hooks";
import type { Product, Schemas } from "../api";

/** A request as the live tail sends it: the request log's entry, with its product and error code. */
export type LiveRecord = Schemas["RequestLogEntry"] & { product: string; error_code: string | null };

export interface LiveTail {
  /** Newest first, at most `KEPT`. */
  records: LiveRecord[];
  state: "off" | "connecting" | "live" | "stopped";
  /** Why a tail stopped (the server's close reason). */
  reason: string;
}

/** Live records kept on the page: older ones drop off the end. */
const KEPT = 500;

/**
 * While `enabled`, the product's live tail (`GET /v1/{product}/requests/tail`), filtered by sub-user: a key rides in
 * the `bearer.<key>` subprotocol (a browser's WebSocket cannot send `Authorization`), a member's session in its
 * cookie; records are acknowledged as the server's hello asks, so a tab in view is never dropped as a slow viewer.
 */
export function useLiveTail(apiKey: string | null, enabled: boolean, product: Product, subuser: string): LiveTail {
  const [tail, setTail] = useState<LiveTail>({ records: [], state: "off", reason: "" });
  useEffect(() => {
    setTail({ records: [], state: enabled ? "connecting" : "off", reason: "" });
    if (!enabled) return;
    const query = subuser ? `?subuser=${encodeURIComponent(subuser)}` : "";
    const url = `${location.origin.replace(/^http/, "ws")}/v1/${product}/requests/tail${query}`;
    // A member's tail goes with the session cookie (the browser sends it to the API's own origin).
    const socket = new WebSocket(url, apiKey === null ? ["tail"] : ["tail", `bearer.${apiKey}`]);
    let ackEvery = 50;
    socket.onopen = () => setTail((previous) => ({ ...previous, state: "live" }));
    socket.onmessage = (event) => {
      const frame = JSON.parse(event.data as string) as { type: string; seq: number; ack_every: number };
      if (frame.type === "hello") ackEvery = frame.ack_every;
      if (frame.type !== "request") return;
      const record = (frame as unknown as { request: LiveRecord }).request;
      setTail((previous) => ({ ...previous, records: [record, ...previous.records].slice(0, KEPT) }));
      if (frame.seq % ackEvery === 0) socket.send(JSON.stringify({ type: "ack", seq: frame.seq }));
    };
    socket.onclose = (event) =>
      setTail((previous) => ({ ...previous, state: "stopped", reason: event.reason || `closed (${event.code})` }));
    return () => {
      socket.onclose = null;
      socket.close(1000, "Live turned off");
    };
  }, [apiKey, enabled, product, subuser]);
  return tail;
}
