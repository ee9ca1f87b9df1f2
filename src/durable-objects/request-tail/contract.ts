/**
 * The live tail's wire protocol, shared by the `RequestTail` object, the domain that feeds it and the clients that
 * read it (the console, `npm run tail`). The server sends `{"type": "hello", ...}` once, then one
 * `{"type": "request", "seq": n, "request": TailRecord}` per record (n counts from 1); the client answers
 * `{"type": "ack", "seq": n}` at least every `ACK_EVERY` records and may send `ping` (answered `pong`).
 */

/** At most this many tails open at once per account, whatever their product and filters. */
export const MAX_TAILS = 5;
/** A client acknowledges at least every this many records. */
export const ACK_EVERY = 50;
/**
 * A tail this many records behind its acknowledgements when more arrive is closed (1008): a slow viewer is dropped,
 * never buffered beyond this and one delivery (a gateway batch's sample, at most 1,000). Wide enough for a few
 * batches in flight during an acknowledgement's round trip, so a viewer that keeps up is never dropped.
 */
export const MAX_UNACKED = 1000;
/** The close code and reason a dropped viewer gets. */
export const TOO_SLOW = { code: 1008, reason: `too far behind: acknowledge at least every ${ACK_EVERY} records` };
/** The subprotocol the server answers a client that offered subprotocols with (a browser's key rides in another). */
export const TAIL_SUBPROTOCOL = "tail";

/** A sampled request as a tail sends it: the request log's entry, with its product and error code. */
export interface TailRecord {
  request_id: string;
  ts: string;
  product: string;
  subuser: string;
  method: string;
  target_host: string;
  status: number;
  bytes: number;
  exit_ip: string;
  exit_geo: string;
  exit_asn: number;
  tag: string | null;
  error_code: string | null;
}

/**
 * What a tail shows: one product, and optionally one sub-user, domain, status (`404` or `4xx`) and error code;
 * `subusers`: the sub-users a bound key reaches (null or absent: every sub-user).
 */
export interface TailFilter {
  product: string;
  subuser: string | null;
  subusers?: string[] | null;
  domain: string | null;
  status: string | null;
  errorCode: string | null;
}

export function matchesFilter(filter: TailFilter, record: TailRecord): boolean {
  return (
    record.product === filter.product &&
    (filter.subuser === null || record.subuser === filter.subuser) &&
    (!filter.subusers || filter.subusers.includes(record.subuser)) &&
    (filter.domain === null || isWithinDomain(record.target_host, filter.domain)) &&
    (filter.status === null || matchesStatus(filter.status, record.status)) &&
    (filter.errorCode === null || record.error_code === filter.errorCode)
  );
}

/** The sub-users a tail shows; null: every sub-user of the account. */
export function tailSubusers(filter: TailFilter): string[] | null {
  return filter.subuser !== null ? [filter.subuser] : (filter.subusers ?? null);
}

/** The host is the domain or one of its subdomains (`api.example.com` is within `example.com`). */
function isWithinDomain(host: string, domain: string): boolean {
  const lower = host.toLowerCase();
  return lower === domain || lower.endsWith(`.${domain}`);
}

/** `404` matches that status; `4xx` any status of the class. */
function matchesStatus(wanted: string, status: number): boolean {
  return wanted.endsWith("xx") ? Math.floor(status / 100) === Number(wanted[0]) : status === Number(wanted);
}
