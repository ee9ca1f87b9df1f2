// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929), CONNECT only.
import type { Socket } from "node:net";
import { socksStatusByte } from "../src/platform/gateway-rules.ts";

const VERSION = 0x05;
const USER_PASS = 0x02;
const NO_ACCEPTABLE_METHOD = 0xff;
const COMMAND_CONNECT = 0x01;
export const REPLY = { succeeded: 0x00, notAllowed: 0x02, hostUnreachable: 0x04, commandNotSupported: 0x07 } as const;
export type ReplyCode = (typeof REPLY)[keyof typeof REPLY];

/** What the handshake hands over after the CONNECT request: `reply(code)` answers it; `rest`: bytes read past it. */
export interface SocksTunnel {
  host: string;
  port: number;
  reply: (code: ReplyCode) => void;
  rest: Buffer;
}

/** Reads exactly `n` bytes at a time from a socket that is not flowing into anyone else. */
function byteReader(socket: Socket, first: Buffer) {
  let buffered = first;
  let waiter: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiter?.();
  };
  socket.on("data", onData);
  socket.resume();
  return {
    async read(n: number): Promise<Buffer> {
      while (buffered.length < n) {
        if (socket.destroyed) throw new Error("client closed");
        await new Promise<void>((resolve) => {
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
    detach(): Buffer {
      socket.off("data", onData);
      socket.pause();
      return buffered;
    },
  };
}

async function readAddress(reader: ReturnType<typeof byteReader>, type: number): Promise<string> {
  if (type === 0x01) return [...(await reader.read(4))].join(".");
  if (type === 0x03) return (await reader.read(await readLength(reader))).toString("latin1");
  if (type === 0x04) {
    const bytes = await reader.read(16);
    return Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(":");
  }
  throw new Error("bad address type");
}

/** A length byte. */
async function readLength(reader: ReturnType<typeof byteReader>): Promise<number> {
  return (await reader.read(1)).readUInt8(0);
}

/**
 * Runs the handshake. `admit({username, password})` returns `{ok: true}` or `{ok: false, errorCode}`;
 * `tunnel({host, port, reply, rest})` takes over after the CONNECT request (`reply(code)` answers it).
 */
export async function handleSocks5(
  socket: Socket,
  first: Buffer,
  {
    admit,
    tunnel,
  }: {
    admit: (credentials: {
      username: string;
      password: string;
    }) => Promise<{ ok: true } | { ok: false; errorCode: string }>;
    tunnel: (opened: SocksTunnel) => void;
  },
): Promise<void> {
  const reader = byteReader(socket, first);
  try {
    const methodCount = (await reader.read(2)).readUInt8(1);
    const methods = await reader.read(methodCount);
    if (!methods.includes(USER_PASS)) {
      socket.end(Buffer.from([VERSION, NO_ACCEPTABLE_METHOD]));
      return;
    }
    socket.write(Buffer.from([VERSION, USER_PASS]));

    const userLength = (await reader.read(2)).readUInt8(1);
    const username = (await reader.read(userLength)).toString("utf8");
    const password = (await reader.read(await readLength(reader))).toString("utf8");
    const admission = await admit({ username, password });
    if (!admission.ok) {
      socket.end(Buffer.from([0x01, socksStatusByte(admission.errorCode)]));
      return;
    }
    socket.write(Buffer.from([0x01, 0x00]));

    const request = await reader.read(4);
    const command = request.readUInt8(1);
    const host = await readAddress(reader, request.readUInt8(3));
    const port = (await reader.read(2)).readUInt16BE(0);
    const reply = (code: ReplyCode) =>
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
