// The change feed (docs/gateway.md, "Pushes"): one WebSocket to the API, reopened with backoff when it drops.
import { STANDING_PING_MS, STANDING_VOUCHED_MS } from "../src/platform/standing-shares.ts";

const MAX_BACKOFF_MS = 30_000;
/** A socket that has answered nothing for this long is dropped and opened again. */
const SILENT_MS = 10_000;

/**
 * `target()`: `{url, headers}` to open the socket with; `onMessage(message)`: each JSON message;
 * `onState(connected)`: the socket opened or was lost. Pings go every `pingMs`; `vouched()` says whether a pong came
 * to a ping sent within `vouchedMs`: the node has then read every push sent before that (one socket keeps order).
 */
export function changeFeed({
  target,
  onMessage,
  onState,
  pingMs = STANDING_PING_MS,
  vouchedMs = STANDING_VOUCHED_MS,
  log = console,
}) {
  let socket = null;
  let failures = 0;
  let retry = null;
  let pinger = null;
  let lastHeard = 0;
  let stopped = false;
  /** When each ping not yet answered was sent (oldest first), and until when the last pong vouches. */
  let unanswered = [];
  let vouchedUntil = 0;

  function open() {
    const { url, headers } = target();
    const opened = new WebSocket(url, { headers });
    socket = opened;
    opened.addEventListener("open", () => {
      failures = 0;
      lastHeard = performance.now();
      unanswered = [];
      onState(true);
      const ping = () => {
        if (performance.now() - lastHeard > SILENT_MS) return opened.close();
        unanswered.push(performance.now());
        opened.send("ping");
      };
      ping();
      pinger = setInterval(ping, pingMs);
      pinger.unref();
    });
    opened.addEventListener("message", (event) => {
      lastHeard = performance.now();
      if (event.data === "pong") {
        const sentAt = unanswered.shift();
        if (sentAt !== undefined) vouchedUntil = sentAt + vouchedMs;
        return;
      }
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      onMessage(message);
    });
    opened.addEventListener("close", () => lost(opened));
    opened.addEventListener("error", () => lost(opened));
  }

  function lost(which) {
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
