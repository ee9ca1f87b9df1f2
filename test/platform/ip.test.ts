import { describe, expect, it } from "vitest";
import { blockContains, formatBlock, parseBlock, parseIp } from "../../src/platform/ip";

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
