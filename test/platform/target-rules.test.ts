import { describe, expect, it } from "vitest";
import { utcDay } from "../../src/platform/clock";
import { type AccessState, accessRefusal, socksStatusByte, targetRefusal } from "../../src/platform/gateway-rules";
import { canonicalDomain, canonicalRange, type TargetRules, targetAllowed } from "../../src/platform/target-rules";

const deny = (domains: string[], ipRanges: string[] = []): TargetRules => ({ mode: "deny", domains, ipRanges });
const allow = (domains: string[], ipRanges: string[] = []): TargetRules => ({ mode: "allow", domains, ipRanges });

describe("target rules", () => {
  it("a domain covers itself and every subdomain, never a look-alike", () => {
    const rules = deny(["example.com"]);
    for (const host of ["example.com", "www.example.com", "a.b.example.com", "EXAMPLE.COM", "example.com."]) {
      expect(targetAllowed(rules, host), host).toBe(false);
    }
    for (const host of ["notexample.com", "example.com.evil.net", "example.co", "com"]) {
      expect(targetAllowed(rules, host), host).toBe(true);
    }
  });

  it("an allow list reaches only what it lists: other names, addresses and malformed hosts are refused", () => {
    const rules = allow(["shop.example"], ["203.0.113.0/24"]);
    expect(targetAllowed(rules, "shop.example")).toBe(true);
    expect(targetAllowed(rules, "cdn.shop.example")).toBe(true);
    expect(targetAllowed(rules, "203.0.113.9")).toBe(true);
    expect(targetAllowed(rules, "198.51.100.1")).toBe(false);
    expect(targetAllowed(rules, "other.example")).toBe(false);
    expect(targetAllowed(rules, "not a host")).toBe(false);
    expect(targetAllowed(rules, "")).toBe(false);
  });

  it("an address spelled loosely, bracketed or IPv4-mapped is matched as the address it is", () => {
    const rules = deny([], ["127.0.0.0/8", "2001:db8::/32"]);
    for (const host of ["127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "::ffff:127.0.0.1", "[2001:db8::5]"]) {
      expect(targetAllowed(rules, host), host).toBe(false);
    }
    expect(targetAllowed(rules, "192.0.2.1")).toBe(true);
    expect(targetAllowed(rules, "[2001:db9::1]")).toBe(true);
  });

  it("IP ranges match only targets written as an address; domains match only names", () => {
    expect(targetAllowed(deny([], ["203.0.113.0/24"]), "example.com")).toBe(true);
    expect(targetAllowed(deny(["example.com"]), "203.0.113.7")).toBe(true);
  });

  it("no rules: every target is reachable", () => {
    expect(targetAllowed(null, "anything.example")).toBe(true);
    expect(targetRefusal(null, "anything.example")).toBeNull();
  });

  it("a refusal is 403 target-denied", () => {
    expect(targetRefusal(deny(["example.com"]), "example.com")).toEqual({ status: 403, errorCode: "target-denied" });
  });

  it("domains and ranges are kept in canonical form; what is neither is refused", () => {
    expect(canonicalDomain(" Example.COM. ")).toBe("example.com");
    expect(canonicalDomain("xn--bcher-kva.example")).toBe("xn--bcher-kva.example");
    for (const text of ["localhost", "-a.example", "a..b", "exa mple.com", "203.0.113.7", "*.example.com"]) {
      expect(canonicalDomain(text), text).toBeNull();
    }
    expect(canonicalRange("2001:0DB8::/32")).toBe("2001:db8::/32");
    expect(canonicalRange("203.0.113.7")).toBe("203.0.113.7");
    expect(canonicalRange("203.0.113.7/24")).toBeNull();
    expect(canonicalRange("example.com")).toBeNull();
  });
});

describe("access rules for expiry and caps", () => {
  const at = Date.parse("2026-11-28T12:00:00Z");
  const state: AccessState = {
    status: "active",
    products: ["residential"],
    passwords: [{ sha256: "a".repeat(64), until: null }],
    exhausted: { residential: false },
    cap: null,
    dayCap: null,
    lifetimeCapReached: false,
    expiresAt: null,
  };
  const request = { product: "residential", passwordHash: "a".repeat(64), whitelisted: () => false };

  it("an expired sub-user is refused 403 subuser-expired from its expires_at on, not a millisecond before", () => {
    expect(accessRefusal({ ...state, expiresAt: at + 1 }, request, at)).toBeNull();
    expect(accessRefusal({ ...state, expiresAt: at }, request, at)).toMatchObject({ errorCode: "subuser-expired" });
  });

  it("credentials come first: a wrong password to an expired sub-user learns only 407", () => {
    const wrong = { ...request, passwordHash: "b".repeat(64) };
    expect(accessRefusal({ ...state, expiresAt: at - 1 }, wrong, at)).toMatchObject({ status: 407 });
  });

  it("a daily cap refuses on its own UTC day only; the next day it reopens with no write", () => {
    const capped = { ...state, dayCap: { day: utcDay(at), reached: true } };
    expect(accessRefusal(capped, request, at)).toEqual({ status: 402, errorCode: "daily-limit-reached" });
    expect(accessRefusal(capped, request, Date.parse("2026-11-29T00:00:00Z"))).toBeNull();
  });

  it("a lifetime cap refuses whatever the day or month", () => {
    const capped = { ...state, lifetimeCapReached: true };
    expect(accessRefusal(capped, request, Date.parse("2027-05-01T00:00:00Z"))).toMatchObject({
      status: 402,
      errorCode: "lifetime-limit-reached",
    });
  });

  it("new refusal codes leave the SOCKS5 status bytes of the older ones unchanged", () => {
    expect(socksStatusByte("auth-failed")).toBe(1);
    expect(socksStatusByte("ip-expired")).toBe(19);
    expect(socksStatusByte("target-denied")).toBe(23);
  });
});
