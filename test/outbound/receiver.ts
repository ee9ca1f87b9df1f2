/**
 * A recording fake webhook receiver for every host under `receiver.test` (runs in Node, behind the outbound
 * service). Use a fresh host per test, e.g. `https://${crypto.randomUUID()}.receiver.test/hook`.
 *
 * What it answers (to any method and path not starting with `/__`):
 * - by default 200 `ok`;
 * - `/status/<code>` in the path: that status (e.g. `/status/500`, `/status/410`, `/status/302`);
 * - `/delay/<ms>` in the path: answers after that many milliseconds (e.g. `/delay/16000` for a timeout);
 * - a script, when one is set: the next scripted answer, in order, before falling back to the path's rules.
 *
 * Control (from a test inside workerd, by `fetch`):
 * - `POST https://<host>/__script` with `[{status, headers?, delay_ms?}, …]`: the next answers, in order;
 * - `GET https://<host>/__received`: every request received so far, oldest first, as
 *   `[{method, path, headers, body, at}]` (`headers` lower-cased, `body` the exact text, `at` epoch ms).
 */
export const RECEIVER_DOMAIN = "receiver.test";

interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  delay_ms?: number;
}

interface HostState {
  received: Received[];
  script: ScriptedAnswer[];
}

const hosts = new Map<string, HostState>();

function stateOf(host: string): HostState {
  let state = hosts.get(host);
  if (!state) {
    state = { received: [], script: [] };
    hosts.set(host, state);
  }
  return state;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function answerFromPath(path: string): ScriptedAnswer {
  const status = /\/status\/(\d{3})(\/|$)/.exec(path)?.[1];
  const delay = /\/delay\/(\d{1,6})(\/|$)/.exec(path)?.[1];
  const code = status ? Number(status) : 200;
  return {
    status: code,
    headers: code >= 300 && code < 400 ? { Location: "https://elsewhere.example/" } : {},
    delay_ms: delay ? Number(delay) : 0,
  };
}

export async function receiver(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const state = stateOf(url.hostname);
  if (url.pathname === "/__received") return Response.json(state.received);
  if (url.pathname === "/__script") {
    state.script.push(...((await request.json()) as ScriptedAnswer[]));
    return Response.json({ queued: state.script.length });
  }
  state.received.push({
    method: request.method,
    path: url.pathname + url.search,
    headers: Object.fromEntries([...request.headers].map(([name, value]) => [name.toLowerCase(), value])),
    body: await request.text(),
    at: Date.now(),
  });
  const answer = state.script.shift() ?? answerFromPath(url.pathname);
  if (answer.delay_ms) await sleep(answer.delay_ms);
  return new Response([204, 205, 304].includes(answer.status) ? null : "ok", {
    status: answer.status,
    headers: answer.headers,
  });
}
