import { expect } from "vitest";
import { call, nodeToken } from "./http";

/** A node's push channel: the messages the API sends on it, as they arrive. */
export async function subscribeChanges(node: string) {
  const response = await call("GET", `/internal/gateway/changes?node=${node}`, {
    token: await nodeToken(node),
    headers: { Upgrade: "websocket" },
  });
  expect(response.status).toBe(101);
  const socket = response.webSocket as WebSocket;
  socket.accept();
  const messages: Array<Record<string, any>> = [];
  const hello = new Promise<Record<string, any>>((resolve) =>
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data as string);
      if (message.type === "hello") resolve(message);
    }),
  );
  socket.addEventListener("message", (event) => messages.push(JSON.parse(event.data as string)));
  const next = async (holds: (message: Record<string, any>) => boolean, timeoutMs = 1000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = messages.find(holds);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no such push in ${timeoutMs} ms: ${JSON.stringify(messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { socket, messages, next, hello: await hello };
}
