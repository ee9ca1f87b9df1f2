import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { blockContains, canonicalIp, formatBlock, formatIp, parseBlock, parseIp } from "../../src/platform/ip";

function canonical(text: string) {
  const parsed = parseBlock(text);
  return parsed.ok ? formatBlock(parsed.block) : parsed.reason;
}

describe("IP parsing", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["203.0.113.7/32", "203.0.113.7"],
    ["203.0.113.0/24", "203.0.113.0/24"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["2001:db8::1", "2001:db8::1"],
    ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:db8::/64", "2001:db8::/64"],
    ["2001:db8::1/128", "2001:db8::1"],
    ["::", "::"],
    // IPv4-mapped IPv6 is the IPv4 address (or block) it maps.
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::ffff:c000:201", "192.0.2.1"],
    ["::ffff:192.0.2.0/120", "192.0.2.0/24"],
    ["::ffff:0.0.0.0/96", "0.0.0.0/0"],
    ["fe80::1:2:3:4", "fe80::1:2:3:4"],
  ])("%s → %s", (input, expected) => {
    expect(canonical(input)).toBe(expected);
  });

  it.each([
    ["203.0.113.7/24", "host_bits"],
    ["2001:db8::1/64", "host_bits"],
    ["256.1.1.1", "malformed"],
    ["01.2.3.4", "malformed"],
    ["1.2.3", "malformed"],
    ["1.2.3.4/33", "malformed"],
    ["2001:db8::1/129", "malformed"],
    ["example.com", "malformed"],
    ["2001:db8:::1", "malformed"],
    ["1:2:3:4:5:6:7:8:9", "malformed"],
    ["", "malformed"],
    ["1.2.3.4/24/1", "malformed"],
    ["1.2.3.4/ 24", "malformed"],
    ["fe80::1%eth0", "malformed"],
    ["0x7f.0.0.1", "malformed"],
    ["127.1", "malformed"],
    ["::ffff:192.0.2.1/120", "host_bits"],
    // An IPv6 address's dotted tail is four decimal parts too.
    ["::ffff:01.2.3.4", "malformed"],
    ["::ffff:1.2.3.04", "malformed"],
    ["64:ff9b::010.0.0.1", "malformed"],
  ])("%s is refused (%s)", (input, reason) => {
    expect(canonical(input)).toBe(reason);
  });

  it("tests containment within the same family only", () => {
    const block = parseBlock("198.51.100.0/24");
    expect(block.ok).toBe(true);
    if (!block.ok) return;
    expect(blockContains(block.block, parseIp("198.51.100.200")!)).toBe(true);
    expect(blockContains(block.block, parseIp("198.51.101.1")!)).toBe(false);
    expect(blockContains(block.block, parseIp("::1")!)).toBe(false);
    const v6 = parseBlock("2001:db8:1:2::/64");
    if (!v6.ok) throw new Error("parse");
    expect(blockContains(v6.block, parseIp("2001:db8:1:2:ffff::9")!)).toBe(true);
    expect(blockContains(v6.block, parseIp("2001:db8:1:3::9")!)).toBe(false);
  });

  it("matches an IPv4-mapped source address as the IPv4 address it maps", () => {
    const block = parseBlock("198.51.100.0/24");
    if (!block.ok) throw new Error("parse");
    expect(blockContains(block.block, parseIp("::ffff:198.51.100.7")!)).toBe(true);
    expect(blockContains(block.block, parseIp("::ffff:198.51.101.7")!)).toBe(false);
  });
});

describe("canonicalIp (the text an address field stores)", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["2001:DB8::0:1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::FFFF:C000:0201", "192.0.2.1"],
    ["64:ff9b::192.0.2.1", "64:ff9b::c000:201"],
    ["::", "::"],
  ])("%s → %s", (input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });

  it.each([
    "999.1.1.1",
    "256.0.0.1",
    "abc",
    "....",
    "1.2.3",
    "1.2.3.4.5",
    "01.2.3.4",
    "::g",
    ":::",
    "::ffff:01.2.3.4",
    "fe80::1%eth0",
    " 192.0.2.1",
    "192.0.2.1 ",
    "",
  ])("refuses %j (not an address)", (input) => {
    expect(canonicalIp(input)).toBeNull();
  });

  it("answers exactly what parsing and formatting answer, on any text of an address's characters", () => {
    const text = fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF:."), maxLength: 45 });
    const ipv4 = fc.ipV4().map(String);
    const ipv6 = fc.oneof(
      fc.ipV6(),
      fc.ipV4().map((ip) => `::ffff:${ip}`),
    );
    fc.assert(
      fc.property(fc.oneof(text, ipv4, ipv6), (input) => {
        const parsed = parseIp(input);
        expect(canonicalIp(input)).toBe(parsed && formatIp(parsed));
      }),
      { numRuns: 5000 },
    );
  });
});
