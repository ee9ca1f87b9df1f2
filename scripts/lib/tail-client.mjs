// A live tail's client (GET /v1/{product}/requests/tail), for `npm run tail` and the bench: opens the WebSocket with
// the key in `Authorization`, acknowledges as the server's hello asks, and hands each record over.
import WebSocket from "ws";

/** The query of a tail's filters: `{ subuser, domain, status, error_code }`, absent ones left out. */
function filterQuery(filters) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== "") query.set(name, value);
  const text = query.toString();
  return text ? `?${text}` : "";
}

/**
 * Opens a tail. Resolves once it is open with `{ close, closed }` (`closed` resolves with `{ code, reason }`); rejects
 * with the API's error (`code: message`) when the upgrade is refused. `onRecord(record, receivedAt)` gets each record.
 */
export function openTail({ base, token, product = "residential", filters = {}, onRecord }) {
  const url = `${base.replace(/^http/, "ws")}/v1/${product}/requests/tail${filterQuery(filters)}`;
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  let ackEvery = 50;
  const closed = new Promise((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on("message", (data) => {
    const frame = JSON.parse(data.toString());
    if (frame.type === "hello") ackEvery = frame.ack_every;
    if (frame.type !== "request") return;
    onRecord(frame.request, performance.now());
    if (frame.seq % ackEvery === 0) socket.send(JSON.stringify({ type: "ack", seq: frame.seq }));
  });
  return new Promise((resolve, reject) => {
    socket.on("open", () => resolve({ close: () => socket.close(1000, "done"), closed }));
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => {
        const error = safeJson(body);
        reject(new Error(error ? `${error.code}: ${error.message}` : `HTTP ${response.statusCode}`));
      });
    });
    socket.on("error", reject);
  });
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
