// The change feed (docs/gateway.md, "Pushes"): one WebSocket to the API, reopened with backoff when it drops.
import { STANDING_PING_MS, STANDING_VOUCHED_MS } from "../src/platform/standing-shares.ts";
import type { GatewayPush, NodeFrame, PongFrame } from "./wire.ts";

const MAX_BACKOFF_MS = 30_000;
/** A socket that has answered nothing for this long is dropped and opened again. */
const SILENT_MS = 10_000;
const PING: NodeFrame = "ping";
const PONG: PongFrame = "pong";

/**
 * Node's WebSocket (undici's) takes the upgrade's headers; the standard constructor, and the Workers types this
 * repository's program also holds, name no such option.
 */
const NodeWebSocket = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;

export interface ChangeFeedOptions {
  /** Where to open the socket, and the headers to open it with. */
  target: () => { url: string; headers: Record<string, string> };
  /** Each message the API pushes. */
  onMessage: (message: GatewayPush) => void;
  /** The socket opened (true) or was lost (false). */
  onState: (connected: boolean) => void;
  pingMs?: number;
  vouchedMs?: number;
  log?: Pick<Console, "error">;
}

export interface ChangeFeed {
  /** A pong came to a ping sent within `vouchedMs`: the node has read every push sent before that. */
  vouched(): boolean;
  close(): void;
}

/**
 * Opens the change feed. Pings go every `pingMs`; `vouched()` says whether a pong came to a ping sent within
 * `vouchedMs`: the node has then read every push sent before that (one socket keeps order).
 */
export function changeFeed({
  target,
  onMessage,
  onState,
  pingMs = STANDING_PING_MS,
  vouchedMs = STANDING_VOUCHED_MS,
  log = console,
}: ChangeFeedOptions): ChangeFeed {
  let socket: WebSocket | null = null;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let pinger: NodeJS.Timeout | undefined;
  let lastHeard = 0;
  let stopped = false;
  /** When each ping not yet answered was sent (oldest first), and until when the last pong vouches. */
  let unanswered: number[] = [];
  let vouchedUntil = 0;

  function open(): void {
    const { url, headers } = target();
    const opened = new NodeWebSocket(url, { headers });
    socket = opened;
    opened.addEventListener("open", () => {
      failures = 0;
      lastHeard = performance.now();
      unanswered = [];
      onState(true);
      const ping = () => {
        if (performance.now() - lastHeard > SILENT_MS) return opened.close();
        unanswered.push(performance.now());
        opened.send(PING);
      };
      ping();
      pinger = setInterval(ping, pingMs);
      pinger.unref();
    });
    opened.addEventListener("message", (event) => {
      lastHeard = performance.now();
      if (event.data === PONG) {
        const sentAt = unanswered.shift();
        if (sentAt !== undefined) vouchedUntil = sentAt + vouchedMs;
        return;
      }
      let message: GatewayPush;
      try {
        // Pushes are text frames (anything else does not parse, and is ignored).
        message = JSON.parse(event.data as string);
      } catch {
        return;
      }
      onMessage(message);
    });
    opened.addEventListener("close", () => lost(opened));
    opened.addEventListener("error", () => lost(opened));
  }

  function lost(which: WebSocket): void {
    if (socket !== which) return;
    socket = null;
    vouchedUntil = 0;
    clearInterval(pinger);
    onState(false);
    if (stopped) return;
    failures += 1;
    // Jittered, so nodes cut off together do not all come back in the same instant.
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures) * (0.5 + Math.random() / 2);
    if (failures === 1 || failures % 10 === 0) log.error(`[gateway] change feed lost; reconnecting (${failures})`);
    retry = setTimeout(open, delay);
    retry.unref();
  }

  open();
  return {
    vouched: () => socket !== null && performance.now() < vouchedUntil,
    close() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(pinger);
      socket?.close();
    },
  };
}
