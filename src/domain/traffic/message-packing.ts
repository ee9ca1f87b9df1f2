import type { DomainContext } from "../context";
import {
  type Cell,
  cellRow,
  type GateUsage,
  type SampleCandidate,
  type SentUsageMessage,
  type SessionUsage,
} from "./usage-messages";

/**
 * A message is packed to about 100 KB by an estimate of its items' size, then measured: past 120 KB (a text
 * far from plain ASCII) it is split in two, well below the queue's 128 KB. A `sendBatch` stays below its 100
 * messages and 256 KB.
 */
const MESSAGE_BYTES = 100_000;
const MESSAGE_BYTES_MAX = 120_000;
const SEND_BATCH_BYTES = 240_000;
const SEND_BATCH_MESSAGES = 100;

/** A message as sent: its JSON text and that text's UTF-8 size. */
export interface PackedMessage {
  text: string;
  bytes: number;
}

/** An account's share of a usage batch, aggregated. */
export interface Share {
  cells: Cell[];
  sessions: Array<{ gateName: string; usage: SessionUsage }>;
  samples: SampleCandidate[];
}

/**
 * Packs an account's share into messages of about 100 KB, in a deterministic order, each serialized once. A
 * gate's sessions may span messages (each is applied once under its own key): one sub-user with many sessions in
 * a batch must not make a message past the queue's limit.
 */
export function packShare(id: { batchId: string; accountId: string }, share: Share): PackedMessage[] {
  const pieces: Share[] = [];
  let piece: Share = { cells: [], sessions: [], samples: [] };
  let size = 0;
  const add = <K extends keyof Share>(kind: K, item: Share[K][number], itemSize: number) => {
    if (size + itemSize > MESSAGE_BYTES && size > 0) {
      pieces.push(piece);
      piece = { cells: [], sessions: [], samples: [] };
      size = 0;
    }
    (piece[kind] as Array<Share[K][number]>).push(item);
    size += itemSize;
  };
  for (const cell of share.cells) add("cells", cell, cellSize(cell));
  for (const session of share.sessions) add("sessions", session, sessionSize(session));
  for (const sample of share.samples) add("samples", sample, sampleSize(sample));
  pieces.push(piece);
  const texts: PackedMessage[] = [];
  // A piece larger than estimated (escapes, non-ASCII text) is split in two until it fits; the halves take its
  // part number, so the numbering stays the same for the same batch.
  const emit = (fit: Share) => {
    const text = JSON.stringify(message(id, texts.length, fit));
    const bytes = messageBytes(text);
    const items = fit.cells.length + fit.sessions.length + fit.samples.length;
    if (bytes <= MESSAGE_BYTES_MAX || items <= 1) {
      texts.push({ text, bytes });
      return;
    }
    const half = <T>(list: T[]) => [list.slice(0, Math.ceil(list.length / 2)), list.slice(Math.ceil(list.length / 2))];
    const [cells, sessions, samples] = [half(fit.cells), half(fit.sessions), half(fit.samples)];
    for (const i of [0, 1]) emit({ cells: cells[i] ?? [], sessions: sessions[i] ?? [], samples: samples[i] ?? [] });
  };
  for (const full of pieces) emit(full);
  return texts;
}

function message(id: { batchId: string; accountId: string }, part: number, piece: Share): SentUsageMessage {
  const gates = new Map<string, GateUsage>();
  for (const { gateName, usage } of piece.sessions) {
    const gate = gates.get(gateName);
    if (gate) gate.sessions.push(usage);
    else gates.set(gateName, { gateName, sessions: [usage] });
  }
  return {
    key: `${id.batchId}:${id.accountId}:${part}`,
    batchId: id.batchId,
    accountId: id.accountId,
    part,
    cells: piece.cells.map(cellRow),
    gates: [...gates.values()],
    samples: piece.samples,
  };
}

/** Estimated JSON sizes: field names, punctuation and numbers as a constant, plus the text fields. */
function cellSize(cell: Cell): number {
  return 100 + cell.subuserId.length + cell.tag.length + cell.carrier.length + cell.ip.length;
}

function sessionSize({ gateName, usage }: Share["sessions"][number]): number {
  const requests = usage.lastRequests.reduce((sum, r) => sum + 140 + r.targetHost.length + r.requestId.length, 0);
  return 260 + gateName.length + usage.username.length + requests;
}

function sampleSize(sample: SampleCandidate): number {
  return 300 + sample.requestId.length + sample.targetHost.length + sample.exitGeo.length + (sample.tag?.length ?? 0);
}

/** Scratch space to measure texts in (a text that does not fit is over the limit anyway). */
const utf8 = new Uint8Array(MESSAGE_BYTES_MAX + 4);
const encoder = new TextEncoder();

/** UTF-8 bytes of a message's text, or Infinity past MESSAGE_BYTES_MAX. */
function messageBytes(text: string): number {
  const { read, written } = encoder.encodeInto(text, utf8);
  return read < text.length ? Number.POSITIVE_INFINITY : written;
}

/** Sends the messages (JSON texts) in `sendBatch` calls within the queue's limits. */
export async function enqueueMessages(ctx: DomainContext, messages: PackedMessage[]): Promise<void> {
  let group: Array<{ body: string; contentType: "text" }> = [];
  let size = 0;
  for (const { text: body, bytes } of messages) {
    if (group.length > 0 && (group.length >= SEND_BATCH_MESSAGES || size + bytes > SEND_BATCH_BYTES)) {
      await ctx.env.USAGE_QUEUE.sendBatch(group);
      group = [];
      size = 0;
    }
    group.push({ body, contentType: "text" });
    size += bytes;
  }
  if (group.length > 0) await ctx.env.USAGE_QUEUE.sendBatch(group);
}
