// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929), CONNECT only.
import { socksStatusByte } from "../src/platform/gateway-rules.ts";

const VERSION = 0x05;
const USER_PASS = 0x02;
const NO_ACCEPTABLE_METHOD = 0xff;
const COMMAND_CONNECT = 0x01;
export const REPLY = { succeeded: 0x00, notAllowed: 0x02, hostUnreachable: 0x04, commandNotSupported: 0x07 };

/** Reads exactly `n` bytes at a time from a socket that is not flowing into anyone else. */
function byteReader(socket, first) {
  let buffered = first;
  let waiter = null;
  const onData = (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiter?.();
  };
  socket.on("data", onData);
  socket.resume();
  return {
    async read(n) {
      while (buffered.length < n) {
        if (socket.destroyed) throw new Error("client closed");
        await new Promise((resolve) => {
          waiter = resolve;
          socket.once("close", resolve);
        });
        waiter = null;
      }
      const out = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      return out;
    },
    /** Stops reading; returns what was read past the handshake (the start of the tunnelled stream). */
    detach() {
      socket.off("data", onData);
      socket.pause();
      return buffered;
    },
  };
}

async function readAddress(reader, type) {
  if (type === 0x01) return [...(await reader.read(4))].join(".");
  if (type === 0x03) return (await reader.read((await reader.read(1))[0])).toString("latin1");
  if (type === 0x04) {
    const bytes = await reader.read(16);
    return Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(":");
  }
  throw new Error("bad address type");
}

/**
 * Runs the handshake. `admit({username, password})` returns `{ok: true}` or `{ok: false, errorCode}`;
 * `tunnel({host, port, reply, rest})` takes over after the CONNECT request (`reply(code)` answers it).
 */
export async function handleSocks5(socket, first, { admit, tunnel }) {
  const reader = byteReader(socket, first);
  try {
    const [, methodCount] = await reader.read(2);
    const methods = await reader.read(methodCount);
    if (!methods.includes(USER_PASS)) {
      socket.end(Buffer.from([VERSION, NO_ACCEPTABLE_METHOD]));
      return;
    }
    socket.write(Buffer.from([VERSION, USER_PASS]));

    const [, userLength] = await reader.read(2);
    const username = (await reader.read(userLength)).toString("utf8");
    const password = (await reader.read((await reader.read(1))[0])).toString("utf8");
    const admission = await admit({ username, password });
    if (!admission.ok) {
      socket.end(Buffer.from([0x01, socksStatusByte(admission.errorCode)]));
      return;
    }
    socket.write(Buffer.from([0x01, 0x00]));

    const [, command, , addressType] = await reader.read(4);
    const host = await readAddress(reader, addressType);
    const port = (await reader.read(2)).readUInt16BE(0);
    const reply = (code) =>
      socket.write(Buffer.from([VERSION, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]), () => {
        if (code !== REPLY.succeeded) socket.end();
      });
    if (command !== COMMAND_CONNECT) {
      reply(REPLY.commandNotSupported);
      return;
    }
    tunnel({ host, port, reply, rest: reader.detach() });
  } catch {
    socket.destroy();
  }
}
