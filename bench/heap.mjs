// The worker isolate's V8 heap, read through the DevTools inspector that `wrangler dev --inspector-port` serves (a
// proxy in front of workerd's inspector for the user worker, whose Durable Objects run in the same isolate).
import { writeFileSync } from "node:fs";
import { sleep } from "./http.mjs";

/** Connects to the worker's inspector on `port`; `poke()` must make the worker handle a request. */
export async function connectInspector(port, poke) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.title.startsWith("Cloudflare Worker"));
  if (!target) throw new Error(`no worker among the inspector's targets: ${JSON.stringify(targets)}`);
  // wrangler's proxy turns away a WebSocket that sends a User-Agent (Node's does) without an allowed Origin.
  const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: "http://127.0.0.1" } });
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`inspector WebSocket ${target.webSocketDebuggerUrl} failed`));
  });
  const pending = new Map();
  let lastId = 0;
  // A heap snapshot arrives as events; other events and the replies to the proxy's own keep-alive calls have no
  // pending id: ignored.
  let snapshotChunks = null;
  ws.onmessage = ({ data }) => {
    const message = JSON.parse(data);
    if (message.method === "HeapProfiler.addHeapSnapshotChunk") snapshotChunks?.push(message.params.chunk);
    const settle = pending.get(message.id);
    pending.delete(message.id);
    settle?.(message);
  };
  ws.onclose = () => {
    for (const settle of pending.values()) settle({ error: { message: "inspector WebSocket closed" } });
    pending.clear();
  };
  const call = (method) =>
    new Promise((resolve, reject) => {
      const id = ++lastId;
      pending.set(id, (message) =>
        message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message.result),
      );
      ws.send(JSON.stringify({ id, method }));
    });

  /** `used`: the live heap (`usedSize`); `buffers`: ArrayBuffer backing stores, which live outside it. */
  const usage = async () => {
    const { usedSize, backingStorageSize } = await call("Runtime.getHeapUsage");
    return { used: usedSize, buffers: backingStorageSize ?? 0 };
  };

  return {
    usage,
    /** A full GC. workerd runs it as a task of the isolate, i.e. once the worker next handles an event: poke it. */
    async collectGarbage() {
      let done = false;
      const collected = call("HeapProfiler.collectGarbage").then(() => {
        done = true;
      });
      while (!done) {
        await poke();
        await Promise.race([collected, sleep(200)]);
      }
    },
    /** Samples the heap every `intervalMs` until the returned `stop()`, which resolves to the peaks. */
    sample(intervalMs = 50) {
      const peak = { used: 0, buffers: 0 };
      let running = true;
      const take = async () => {
        const now = await usage();
        peak.used = Math.max(peak.used, now.used);
        peak.buffers = Math.max(peak.buffers, now.buffers);
      };
      const loop = (async () => {
        while (running) {
          await take();
          await sleep(intervalMs);
        }
      })();
      return async () => {
        running = false;
        await loop;
        await take();
        return peak;
      };
    },
    /** A heap snapshot (`.heapsnapshot` JSON, as DevTools reads it), written to `file`. */
    async snapshot(file) {
      snapshotChunks = [];
      let done = false;
      const taken = call("HeapProfiler.takeHeapSnapshot").then(() => {
        done = true;
      });
      while (!done) {
        await poke();
        await Promise.race([taken, sleep(200)]);
      }
      writeFileSync(file, snapshotChunks.join(""));
      snapshotChunks = null;
    },
    close: () => ws.close(),
  };
}
