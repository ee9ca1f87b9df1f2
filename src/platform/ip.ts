import ipaddr from "ipaddr.js";

/**
 * IP addresses and CIDR blocks, on `ipaddr.js`: strict parsing, canonical text, containment. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) is the IPv4 address it maps, both when a block is stored and when a source IP is matched,
 * so the IPv4 rules apply to it. Pure and synchronous: the sub-user gate matches inside a Durable Object call.
 */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

export interface IpBlock {
  /** The network address (host bits zero). */
  address: IpAddress;
  prefix: number;
}

export type ParsedBlock = { ok: true; block: IpBlock } | { ok: false; reason: "malformed" | "host_bits" };

const MAPPED_PREFIX = 96;

/**
 * A single address in standard notation (four decimal parts for IPv4, also as an IPv6 address's dotted tail; no zone
 * id), unmapped; else null.
 */
export function parseIp(text: string): IpAddress | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(":") || text.includes("%") || !ipaddr.IPv6.isValid(text) || !hasDecimalTail(text)) return null;
  const address = ipaddr.IPv6.parse(text);
  return address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

/** `ipaddr.js` reads an IPv6 address's dotted tail as loosely as `inet_aton` (`0x1`, `01`): refused here. */
function hasDecimalTail(text: string): boolean {
  return !text.includes(".") || ipaddr.IPv4.isValidFourPartDecimal(text.slice(text.lastIndexOf(":") + 1));
}

/** Four decimal parts without leading zeros: an IPv4 address that is its own canonical text. */
const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * The canonical text of an address (`formatIp` of `parseIp`), or null when the text is none. A plain IPv4 address,
 * most of what the gateway reports, is answered without parsing.
 */
export function canonicalIp(text: string): string | null {
  if (CANONICAL_IPV4.test(text)) return text;
  const address = parseIp(text);
  return address && formatIp(address);
}

/** An address or `address/prefix`. A block whose host bits are set is refused rather than silently widened. */
export function parseBlock(text: string): ParsedBlock {
  const [addressText, prefixText, extra] = text.trim().split("/");
  if (extra !== undefined || !addressText) return { ok: false, reason: "malformed" };
  const parsed = parseIp(addressText);
  if (!parsed) return { ok: false, reason: "malformed" };
  // A mapped address was written as IPv6: its prefix counts the 96 bits of the mapping prefix.
  const mapped = parsed.kind() === "ipv4" && addressText.includes(":");
  const bits = parsed.kind() === "ipv4" ? 32 : 128;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return { ok: false, reason: "malformed" };
    prefix = Number(prefixText) - (mapped ? MAPPED_PREFIX : 0);
    if (prefix > bits) return { ok: false, reason: "malformed" };
    // A block wider than the mapped range is an IPv6 block around it: keep it as written.
    if (prefix < 0) return parseIpv6Block(addressText, Number(prefixText));
  }
  const network = networkAddress(parsed, prefix);
  if (network.toString() !== parsed.toString()) return { ok: false, reason: "host_bits" };
  return { ok: true, block: { address: network, prefix } };
}

function parseIpv6Block(addressText: string, prefix: number): ParsedBlock {
  const address = ipaddr.IPv6.parse(addressText);
  const network = networkAddress(address, prefix);
  if (network.toString() !== address.toString()) return { ok: false, reason: "host_bits" };
  return { ok: true, block: { address: network, prefix } };
}

function networkAddress(address: IpAddress, prefix: number): IpAddress {
  const bytes = address.toByteArray();
  return ipaddr.fromByteArray(
    bytes.map((byte, index) => {
      const keep = Math.max(0, Math.min(8, prefix - index * 8));
      return byte & ((0xff << (8 - keep)) & 0xff);
    }),
  );
}

export function formatIp(address: IpAddress): string {
  return address.kind() === "ipv6" ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
}

/** Canonical text: a single address without a prefix, a block as `network/prefix` (RFC 5952 for IPv6). */
export function formatBlock(block: IpBlock): string {
  const address = formatIp(block.address);
  return block.prefix === (block.address.kind() === "ipv4" ? 32 : 128) ? address : `${address}/${block.prefix}`;
}

export function blockContains(block: IpBlock, ip: IpAddress): boolean {
  return block.address.kind() === ip.kind() && ip.match(block.address, block.prefix);
}

/** The prefix a client address is grouped by: IPv4 /24, IPv6 /64 (a typical customer or host allocation). */
export const CLIENT_BLOCK_PREFIX = { ipv4: 24, ipv6: 64 } as const;

/** The block of a client address in canonical text (`203.0.113.0/24`, `2001:db8:1:2::/64`); null if malformed. */
export function clientBlock(text: string): string | null {
  const address = parseIp(text);
  if (!address) return null;
  return formatBlock({
    address: networkAddress(address, CLIENT_BLOCK_PREFIX[address.kind()]),
    prefix: CLIENT_BLOCK_PREFIX[address.kind()],
  });
}

/** Whether a source address is on a whitelist for a product. */
export type WhitelistCheck = (product: string, sourceIp: string) => boolean;

/**
 * A whitelist (`{product, ip}` entries: an address or a block) compiled once for matching; entries that do not parse
 * are skipped. The sub-user's gate and every gateway node match with it, so both read a whitelist alike.
 */
export function whitelistCheck(entries: ReadonlyArray<{ product: string; ip: string }>): WhitelistCheck {
  const blocks = entries.flatMap((entry) => {
    const parsed = parseBlock(entry.ip);
    return parsed.ok ? [{ product: entry.product, block: parsed.block }] : [];
  });
  return (product, sourceIp) => {
    const ip = parseIp(sourceIp);
    return ip !== null && blocks.some((entry) => entry.product === product && blockContains(entry.block, ip));
  };
}
