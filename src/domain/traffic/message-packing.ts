import type { DomainContext } from "../context";
import {
  type Cell,
  type ClientSource,
  cellRow,
  type DomainCell,
  domainRow,
  type GateUsage,
  type SampleCandidate,
  type SentUsagePart,
  type SessionUsage,
  sampleRow,
  sourceRow,
} from "./usage-messages";

/**
 * Parts and messages are packed to about 100 KB by an estimate of their items' size, then measured: a part past
 * 120 KB (a text far from plain ASCII) is split in two, so every message stays below the queue's 128 KB. A
 * `sendBatch` stays below its 100 messages and 256 KB.
 */
const MESSAGE_BYTES = 100_000;
const PART_BYTES_MAX = 120_000;
const SEND_BATCH_BYTES = 240_000;
const SEND_BATCH_MESSAGES = 100;

/** A message as sent: its JSON text and that text's UTF-8 size. */
export interface PackedMessage {
  text: string;
  bytes: number;
}

/** An account's share of a usage batch, aggregated. */
export interface Share {
  accountId: string;
  cells: Cell[];
  domains: DomainCell[];
  sources: ClientSource[];
  sessions: Array<{ gateName: string; usage: SessionUsage }>;
  samples: SampleCandidate[];
}

type Items = Omit<Share, "accountId">;

/**
 * Packs a batch's account shares into messages of about 100 KB: each share is cut into parts (keyed
 * `batch:account:part`), and parts of several accounts share a message. Deterministic: the same shares give the
 * same messages, byte for byte, so a retried batch's parts are recognised and applied once. A gate's sessions may
 * span parts (each is applied once under its own key): one sub-user with many sessions in a batch must not make a
 * part past the queue's limit.
 */
export function packBatch(batchId: string, shares: Share[]): PackedMessage[] {
  const parts = [...shares]
    .sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0))
    .flatMap((share) => packedParts(batchId, share));
  const head = `{"batchId":${JSON.stringify(batchId)},"parts":[`;
  const messages: PackedMessage[] = [];
  let texts: string[] = [];
  let bytes = 0;
  const flush = () => {
    messages.push({ text: `${head}${texts.join(",")}]}`, bytes: bytes + head.length + 2 });
    texts = [];
    bytes = 0;
  };
  for (const part of parts) {
    if (texts.length > 0 && bytes + part.bytes + 1 > MESSAGE_BYTES) flush();
    texts.push(part.text);
    bytes += part.bytes + (texts.length > 1 ? 1 : 0);
  }
  if (texts.length > 0) flush();
  return messages;
}

/** An account's share as parts (JSON texts, each measured), in a deterministic order. */
function packedParts(batchId: string, share: Share): PackedMessage[] {
  const pieces: Items[] = [];
  let piece: Items = emptyItems();
  let size = 0;
  const add = <K extends keyof Items>(kind: K, item: Items[K][number], itemSize: number) => {
    if (size + itemSize > MESSAGE_BYTES && size > 0) {
      pieces.push(piece);
      piece = emptyItems();
      size = 0;
    }
    (piece[kind] as Array<Items[K][number]>).push(item);
    size += itemSize;
  };
  for (const cell of share.cells) add("cells", cell, cellSize(cell));
  for (const cell of share.domains) add("domains", cell, domainSize(cell));
  for (const source of share.sources) add("sources", source, sourceSize(source));
  for (const session of share.sessions) add("sessions", session, sessionSize(session));
  for (const sample of share.samples) add("samples", sample, sampleSize(sample));
  pieces.push(piece);
  const texts: PackedMessage[] = [];
  // A piece larger than estimated (escapes, non-ASCII text) is split in two until it fits; the halves take its
  // part number, so the numbering stays the same for the same batch.
  const emit = (fit: Items) => {
    const text = JSON.stringify(sentPart(`${batchId}:${share.accountId}:${texts.length}`, share.accountId, fit));
    const bytes = utf8Bytes(text);
    const items = fit.cells.length + fit.domains.length + fit.sources.length + fit.sessions.length + fit.samples.length;
    if (bytes <= PART_BYTES_MAX || items <= 1) {
      texts.push({ text, bytes });
      return;
    }
    const half = <T>(list: T[]) => [list.slice(0, Math.ceil(list.length / 2)), list.slice(Math.ceil(list.length / 2))];
    for (const i of [0, 1]) {
      emit({
        cells: half(fit.cells)[i] ?? [],
        domains: half(fit.domains)[i] ?? [],
        sources: half(fit.sources)[i] ?? [],
        sessions: half(fit.sessions)[i] ?? [],
        samples: half(fit.samples)[i] ?? [],
      });
    }
  };
  for (const full of pieces) emit(full);
  return texts;
}

function emptyItems(): Items {
  return { cells: [], domains: [], sources: [], sessions: [], samples: [] };
}

function sentPart(key: string, accountId: string, piece: Items): SentUsagePart {
  const gates = new Map<string, GateUsage>();
  for (const { gateName, usage } of piece.sessions) {
    const gate = gates.get(gateName);
    if (gate) gate.sessions.push(usage);
    else gates.set(gateName, { gateName, sessions: [usage] });
  }
  return {
    key,
    accountId,
    cells: piece.cells.map(cellRow),
    domains: piece.domains.map(domainRow),
    sources: piece.sources.map(sourceRow),
    gates: [...gates.values()],
    samples: piece.samples.map(sampleRow),
  };
}

/** Estimated JSON sizes: punctuation and numbers as a constant, plus the text fields. */
function cellSize(cell: Cell): number {
  return 70 + cell.subuserId.length + cell.tag.length + cell.carrier.length + cell.ip.length;
}

function domainSize(cell: DomainCell): number {
  return 50 + cell.subuserId.length + cell.domain.length;
}

function sourceSize(source: ClientSource): number {
  return 60 + source.subuserId.length + source.block.length;
}

function sessionSize({ gateName, usage }: Items["sessions"][number]): number {
  const requests = usage.lastRequests.reduce((sum, r) => sum + 140 + r.targetHost.length + r.requestId.length, 0);
  return 260 + gateName.length + usage.username.length + requests;
}

function sampleSize(sample: SampleCandidate): number {
  return (
    90 +
    sample.requestId.length +
    sample.subuserId.length +
    sample.targetHost.length +
    sample.exitGeo.length +
    sample.exitIp.length +
    (sample.tag?.length ?? 0)
  );
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a text (ASCII texts, nearly all of them, without encoding). */
function utf8Bytes(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  return /^[\x00-\x7f]*$/.test(text) ? text.length : encoder.encode(text).length;
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
