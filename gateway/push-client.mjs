// The change feed (docs/gateway.md, "Pushes"): one WebSocket to the API, reopened with backoff when it drops.

const MAX_BACKOFF_MS = 30_000;

/**
 * `target()`: `{url, headers}` to open the socket with; `onMessage(message)`: each JSON message;
 * `onState(connected)`: the socket opened or was lost. A socket that answers no ping for two periods is dropped.
 */
export function changeFeed({ target, onMessage, onState, pingMs = 20_000, log = console }) {
  let socket = null;
  let failures = 0;
  let retry = null;
  let pinger = null;
  let lastHeard = 0;
  let stopped = false;

  function open() {
    const { url, headers } = target();
    const opened = new WebSocket(url, { headers });
    socket = opened;
    opened.addEventListener("open", () => {
      failures = 0;
      lastHeard = performance.now();
      onState(true);
      pinger = setInterval(() => {
        if (performance.now() - lastHeard > 2 * pingMs) return opened.close();
        opened.send("ping");
      }, pingMs);
      pinger.unref();
    });
    opened.addEventListener("message", (event) => {
      lastHeard = performance.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return; // "pong"
      }
      onMessage(message);
    });
    opened.addEventListener("close", () => lost(opened));
    opened.addEventListener("error", () => lost(opened));
  }

  function lost(which) {
    if (socket !== which) return;
    socket = null;
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
    close() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(pinger);
      socket?.close();
    },
  };
}
