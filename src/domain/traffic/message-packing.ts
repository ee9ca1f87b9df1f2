import { storeName } from "../../durable-objects/traffic-store";
import { gzipText } from "../../platform/gzip";
import {
  type Cell,
  type ClientSource,
  cellRow,
  type DomainCell,
  domainRow,
  type GateUsage,
  type SampleCandidate,
  type SentUsagePart,
  type SessionDelta,
  type SessionUsage,
  sampleRow,
  sourceRow,
} from "./usage-messages";

/**
 * Parts are packed to about 100 KB of JSON by an estimate of their items' size, then measured: a part past 120 KB
 * (a text far from plain ASCII) is split in two. Messages hold parts up to 800 KB of JSON and travel gzipped (usage
 * JSON shrinks ~7×: fewer, fuller messages fill a shard's batch more slowly); a message whose gzip passes 120 KB
 * is split between its parts, so every message stays below the queue's 128 KB. A `sendBatch` stays below its 100
 * messages and 256 KB.
 */
const PART_BYTES = 100_000;
const PART_BYTES_MAX = 120_000;
const MESSAGE_BYTES = 800_000;
const GZIPPED_BYTES_MAX = 120_000;
const SEND_BATCH_BYTES = 240_000;
const SEND_BATCH_MESSAGES = 100;

/** A message's (or a part's) JSON text and that text's UTF-8 size; a message keeps its head and parts. */
export interface PackedMessage {
  text: string;
  bytes: number;
  head?: string;
  parts?: PackedMessage[];
}

/** An account's share of a usage batch (or of one of its store shards: its sub-users'), aggregated. */
export interface Share {
  accountId: string;
  /** The account's store shard (absent: 0). */
  shard?: number;
  cells: Cell[];
  domains: DomainCell[];
  sources: ClientSource[];
  /** Usage of sticky sessions the records did not name (their gates find them). */
  sessions: Array<{ gateName: string; usage: SessionUsage }>;
  /**
   * Usage of the sticky sessions the records named (`session`), and of those a node decided (`session_gen`: keyed
   * by session key and generation, provisionally named; the account's store names them).
   */
  sessionDeltas: SessionDelta[];
  samples: SampleCandidate[];
}

type Items = Omit<Share, "accountId" | "shard">;

/**
 * Packs a batch's account shares into messages of about 100 KB: each share is cut into parts (keyed
 * `batch:account:part`, `batch:account/shard:part` for a shard past 0), and parts of several accounts share a message. Deterministic: the same shares give the
 * same parts, byte for byte, so a retried batch's parts are recognised and applied once; `receivedAt` (when this
 * post was received) and the parts' oldest usage tell the stores how far back to look for them. A gate's sessions
 * may span parts (each is applied once under its own key): one sub-user with many sessions in a batch must not make
 * a part past the queue's limit.
 */
export function packBatch(batchId: string, shares: Share[], receivedAt: number): PackedMessage[] {
  const parts = [...shares]
    .sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : (a.shard ?? 0) - (b.shard ?? 0)))
    .flatMap((share) => packedParts(batchId, share));
  return packMessages(`{"batchId":${JSON.stringify(batchId)},"receivedAt":${receivedAt},"parts":[`, parts);
}

/** Part texts into messages (`head`, the parts, `]}`) of up to `maxBytes` of JSON each, in order. */
export function packMessages(head: string, parts: PackedMessage[], maxBytes = MESSAGE_BYTES): PackedMessage[] {
  const messages: PackedMessage[] = [];
  let group: PackedMessage[] = [];
  let bytes = 0;
  const flush = () => {
    const text = `${head}${group.map((part) => part.text).join(",")}]}`;
    messages.push({ text, bytes: bytes + head.length + 2, head, parts: group });
    group = [];
    bytes = 0;
  };
  for (const part of parts) {
    if (group.length > 0 && bytes + part.bytes + 1 > maxBytes) flush();
    group.push(part);
    bytes += part.bytes + (group.length > 1 ? 1 : 0);
  }
  if (group.length > 0) flush();
  return messages;
}

/** An account's share as parts (JSON texts, each measured), in a deterministic order. */
function packedParts(batchId: string, share: Share): PackedMessage[] {
  const pieces: Items[] = [];
  let piece: Items = emptyItems();
  let size = 0;
  const add = <K extends keyof Items>(kind: K, item: Items[K][number], itemSize: number) => {
    if (size + itemSize > PART_BYTES && size > 0) {
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
  // A named session's delta also carries who the session is (and a keyed one its key and generation).
  for (const delta of share.sessionDeltas) {
    add("sessionDeltas", delta, sessionSize(delta) + 160 + (delta.key === undefined ? 0 : delta.key.length + 30));
  }
  for (const sample of share.samples) add("samples", sample, sampleSize(sample));
  pieces.push(piece);
  const texts: PackedMessage[] = [];
  // A piece larger than estimated (escapes, non-ASCII text) is split in two until it fits; the halves take its
  // part number, so the numbering stays the same for the same batch.
  const emit = (fit: Items) => {
    const name = storeName(share.accountId, share.shard ?? 0);
    const text = JSON.stringify(sentPart(`${batchId}:${name}:${texts.length}`, share, fit));
    const bytes = utf8Bytes(text);
    const items =
      fit.cells.length +
      fit.domains.length +
      fit.sources.length +
      fit.sessions.length +
      fit.sessionDeltas.length +
      fit.samples.length;
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
        sessionDeltas: half(fit.sessionDeltas)[i] ?? [],
        samples: half(fit.samples)[i] ?? [],
      });
    }
  };
  for (const full of pieces) emit(full);
  return texts;
}

function emptyItems(): Items {
  return { cells: [], domains: [], sources: [], sessions: [], sessionDeltas: [], samples: [] };
}

function sentPart(key: string, { accountId, shard }: Pick<Share, "accountId" | "shard">, piece: Items): SentUsagePart {
  const gates = new Map<string, GateUsage>();
  for (const { gateName, usage } of piece.sessions) {
    const gate = gates.get(gateName);
    if (gate) gate.sessions.push(usage);
    else gates.set(gateName, { gateName, sessions: [usage] });
  }
  return {
    key,
    accountId,
    ...(shard ? { shard } : {}),
    cells: piece.cells.map(cellRow),
    domains: piece.domains.map(domainRow),
    sources: piece.sources.map(sourceRow),
    ...(piece.sessionDeltas.length > 0 ? { sessions: piece.sessionDeltas } : {}),
    gates: [...gates.values()],
    samples: piece.samples.map(sampleRow),
  };
}

/** Estimated JSON sizes: punctuation and numbers as a constant, plus the text fields. */
function cellSize(cell: Cell): number {
  return (
    80 + cell.subuserId.length + cell.tag.length + cell.carrier.length + cell.ip.length + (cell.errorCode?.length ?? 0)
  );
}

function domainSize(cell: DomainCell): number {
  return 50 + cell.subuserId.length + cell.domain.length;
}

function sourceSize(source: ClientSource): number {
  return 60 + source.subuserId.length + source.block.length;
}

function sessionSize({ gateName, usage }: { gateName: string; usage: SessionUsage }): number {
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

/**
 * Sends messages gzipped, in `sendBatch` calls within the queue's limits. A message whose gzip is too large for the
 * queue is sent as two, its parts split between them.
 */
export async function enqueueMessages(queue: Queue, messages: PackedMessage[]): Promise<void> {
  const bodies: Uint8Array[] = [];
  const encode = async (message: PackedMessage): Promise<void> => {
    const body = await gzipText(message.text);
    const parts = message.parts ?? [];
    if (body.byteLength <= GZIPPED_BYTES_MAX || parts.length < 2) {
      bodies.push(body);
      return;
    }
    const half = Math.ceil(parts.length / 2);
    for (const group of [parts.slice(0, half), parts.slice(half)]) {
      for (const smaller of packMessages(message.head ?? "", group)) await encode(smaller);
    }
  };
  for (const message of messages) await encode(message);
  let group: Array<{ body: Uint8Array; contentType: "bytes" }> = [];
  let size = 0;
  for (const body of bodies) {
    if (group.length > 0 && (group.length >= SEND_BATCH_MESSAGES || size + body.byteLength > SEND_BATCH_BYTES)) {
      await queue.sendBatch(group);
      group = [];
      size = 0;
    }
    group.push({ body, contentType: "bytes" });
    size += body.byteLength;
  }
  if (group.length > 0) await queue.sendBatch(group);
}
