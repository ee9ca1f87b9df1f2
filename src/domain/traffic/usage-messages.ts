import {
  type Cell,
  type CellRow,
  type ClientSource,
  cellOf,
  cellRow,
  type DomainCell,
  type DomainRow,
  domainCellOf,
  type GateUsage,
  type SampleCandidate,
  type SampleRow,
  type SessionDelta,
  type SessionUsage,
  type SettleMessage,
  type SourceRow,
  sampleOf,
  sampleRow,
  sourceOf,
} from "../../durable-objects/traffic-store/contract";

export { cellRow, domainRow, sampleRow, sourceRow } from "../../durable-objects/traffic-store/contract";

export type {
  Cell,
  CellRow,
  ClientSource,
  DomainCell,
  DomainRow,
  GateUsage,
  SampleCandidate,
  SampleRow,
  SessionDelta,
  SessionUsage,
};

/**
 * What a usage batch becomes on the `usage` queue. Each account's share is aggregated — rollup cells (usage summed
 * per minute and dimensions), sticky-session usage per sub-user gate, request-log sample candidates — and cut into
 * parts of at most ~100 KB; messages carry the parts of several accounts, up to ~100 KB each. A part's `key`
 * (`batch:account:part`) is the same whenever the same batch is posted again, and so is its content, so every
 * store applies each part once whatever arrives twice.
 */
export interface UsagePart {
  key: string;
  accountId: string;
  /** The account's store shard the part goes to (`store-shards.ts`; absent: 0). */
  shard?: number;
  /**
   * When the usage route received the post that sent this copy of the part: a store looks for the part's key among
   * the parts it applied since then, or since the part's oldest usage less the clock skew if earlier.
   */
  receivedAt?: number;
  cells: Cell[];
  domains: DomainCell[];
  sources: ClientSource[];
  /** Sticky sessions' usage of records that name their session. */
  sessions: SessionDelta[];
  /** Sticky sessions' usage of records that name none: their gates find the session. */
  gates: GateUsage[];
  samples: SampleCandidate[];
}

/** A part as sent: cells and samples as rows (half the bytes to serialize, queue and parse). */
export interface SentUsagePart {
  key: string;
  accountId: string;
  /** Absent for shard 0 (and in parts sent before accounts were sharded). */
  shard?: number;
  cells: CellRow[];
  /** Absent in parts sent before the domain dimension. */
  domains?: DomainRow[];
  /** Absent in parts sent before client sources. */
  sources?: SourceRow[];
  /** Absent in parts sent before records named their session. */
  sessions?: SessionDelta[];
  gates: GateUsage[];
  samples: SampleRow[];
  /** Set on each part when the first queue's consumer forwards it to the account's shard. */
  receivedAt?: number;
}

/** A message as sent: the parts of one or more accounts of one batch. */
export interface SentUsageMessage {
  batchId: string;
  /** When the usage route received the post (absent in messages from before: their queue time stands in). */
  receivedAt?: number;
  parts: SentUsagePart[];
}

/** A message of one account's part, as the queue carried them before parts were packed together. */
interface SingleAccountMessage {
  key: string;
  accountId: string;
  cells: Array<CellRow | Cell>;
  gates: GateUsage[];
  samples: SampleCandidate[];
}

/** A message as the consumer reads it: usage parts, or an account whose metered usage is due for settlement. */
export function readUsageMessage(
  body: SentUsageMessage | SingleAccountMessage | SettleMessage,
): { parts: UsagePart[] } | { settle: string; shard: number } {
  return "settle" in body ? { settle: body.settle, shard: body.shard ?? 0 } : { parts: usagePartsOf(body) };
}

/** A message's content as sent: usage parts (unread), or a settle request. */
export type UsageMessageBody = SentUsageMessage | SingleAccountMessage | SettleMessage;

/** The parts of a message as the consumer reads it; a message from before parts were packed together is one part. */
export function usagePartsOf(body: SentUsageMessage | SingleAccountMessage): UsagePart[] {
  return sentPartsOf(body).map((part) => ({
    key: part.key,
    accountId: part.accountId,
    ...(part.shard ? { shard: part.shard } : {}),
    cells: part.cells.map(cellOf),
    domains: (part.domains ?? []).map(domainCellOf),
    sources: (part.sources ?? []).map(sourceOf),
    sessions: part.sessions ?? [],
    gates: part.gates,
    samples: part.samples.map(sampleOf),
    ...(part.receivedAt === undefined ? {} : { receivedAt: part.receivedAt }),
  }));
}

/** The parts of a message as sent (what the first consumer forwards to the accounts' shards unread). */
export function sentPartsOf(body: SentUsageMessage | SingleAccountMessage): SentUsagePart[] {
  if ("parts" in body) {
    const { receivedAt } = body;
    if (receivedAt === undefined) return body.parts;
    return body.parts.map((part) => (part.receivedAt === undefined ? { ...part, receivedAt } : part));
  }
  return [
    {
      key: body.key,
      accountId: body.accountId,
      cells: body.cells.map((cell) => (Array.isArray(cell) ? cell : cellRow(cell))),
      gates: body.gates,
      samples: body.samples.map(sampleRow),
    },
  ];
}
