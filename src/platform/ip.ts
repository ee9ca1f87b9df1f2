/**
 * IP addresses and CIDR blocks: parsing, canonical text, and containment. Pure and synchronous
 * (the sub-user gate matches source IPs inside a Durable Object call without awaiting).
 */
export interface IpBlock {
  version: 4 | 6;
  /** The network address as an unsigned integer. */
  network: bigint;
  prefix: number;
}

export type ParsedBlock = { ok: true; block: IpBlock } | { ok: false; reason: "malformed" | "host_bits" };

const IPV4_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export function parseIpv4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!IPV4_OCTET.test(part)) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

export function parseIpv6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length > 45) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0] ?? "");
  const tail = halves.length === 2 ? groups(halves[1] ?? "") : [];
  // An embedded IPv4 address takes the last two groups.
  const last = (halves.length === 2 ? tail : head).at(-1);
  const words: number[] = [];
  const pushGroups = (list: string[]) => {
    for (const group of list) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return false;
      words.push(Number.parseInt(group, 16));
    }
    return true;
  };
  let embedded: bigint | null = null;
  if (last?.includes(".")) {
    embedded = parseIpv4(last);
    if (embedded === null) return null;
    (halves.length === 2 ? tail : head).pop();
  }
  const explicit = head.length + tail.length + (embedded === null ? 0 : 2);
  if (halves.length === 1 && explicit !== 8) return null;
  if (halves.length === 2 && explicit > 7) return null;
  if (!pushGroups(head)) return null;
  const headWords = words.splice(0);
  if (!pushGroups(tail)) return null;
  const tailWords = words.splice(0);
  const zeros = 8 - explicit;
  const all = [...headWords, ...Array(zeros).fill(0), ...tailWords];
  let value = 0n;
  for (const word of all) value = (value << 16n) | BigInt(word);
  if (embedded !== null) value = (value << 32n) | embedded;
  return value;
}

export function parseIp(text: string): { version: 4 | 6; value: bigint } | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = parseIpv6(text);
  return v6 === null ? null : { version: 6, value: v6 };
}

/** An address or `address/prefix`. A block whose host bits are set is refused rather than silently widened. */
export function parseBlock(text: string): ParsedBlock {
  const [address, prefixText, extra] = text.trim().split("/");
  if (extra !== undefined || !address) return { ok: false, reason: "malformed" };
  const ip = parseIp(address);
  if (!ip) return { ok: false, reason: "malformed" };
  const bits = ip.version === 4 ? 32 : 128;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return { ok: false, reason: "malformed" };
    prefix = Number(prefixText);
    if (prefix > bits) return { ok: false, reason: "malformed" };
  }
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  if ((ip.value & hostMask) !== 0n) return { ok: false, reason: "host_bits" };
  return { ok: true, block: { version: ip.version, network: ip.value, prefix } };
}

export function formatIp(version: 4 | 6, value: bigint): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join(".");
  const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt((7 - i) * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (≥ 2) of zero groups, the first one on a tie; lower-case hex.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = words.map((word) => word.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** Canonical text: a single address without a prefix, a block as `network/prefix`. */
export function formatBlock(block: IpBlock): string {
  const address = formatIp(block.version, block.network);
  return block.prefix === (block.version === 4 ? 32 : 128) ? address : `${address}/${block.prefix}`;
}

export function blockContains(block: IpBlock, ip: { version: 4 | 6; value: bigint }): boolean {
  if (block.version !== ip.version) return false;
  const bits = block.version === 4 ? 32 : 128;
  const shift = BigInt(bits - block.prefix);
  return ip.value >> shift === block.network >> shift;
}
