import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  curlLine,
  type GatewaySettings,
  gatewayUsername,
  type ProxyTarget,
  proxyLine,
  proxyListQuery,
  rotatingTarget,
  targetProblem,
  withPassword,
} from "../../console/src/proxy-string";
import { PASSWORD_PLACEHOLDER } from "../../src/domain/gateway/proxy-lines";
import { parseUsername } from "../../src/domain/gateway/username";

const gateway: GatewaySettings = {
  host: "gw.example.com",
  port: 7777,
  username_prefix: "user",
  max_sesstime_minutes: { residential: 30, mobile: 60 },
};
const NAME = "s1a2b3c4d5e";
const target = (changes: Partial<ProxyTarget> = {}): ProxyTarget => ({
  ...rotatingTarget("residential"),
  ...changes,
});

describe("the console's proxy-string generator", () => {
  it("builds the username in the grammar's order, and the gateway's own parser reads back every segment", () => {
    const chosen = target({
      country: "US",
      state: "ca",
      city: "Los Angeles",
      asn: "7922",
      session: "Abc123",
      sesstime: "15",
    });
    expect(targetProblem(chosen, gateway)).toBeNull();
    const username = gatewayUsername(NAME, chosen, "user");
    expect(username).toBe(
      "user_s1a2b3c4d5e-type-res-region-us-state-ca-city-losangeles-asn-7922-session-abc123-sesstime-15",
    );
    expect(parseUsername(username, "user")).toEqual({
      ok: true,
      value: {
        name: NAME,
        product: "residential",
        target: {
          type: "res",
          region: "us",
          state: "ca",
          city: "losangeles",
          asn: 7922,
          sessionId: "abc123",
          sesstime: 15,
        },
      },
    });
    expect(proxyLine(gateway, username, "pw")).toBe(`gw.example.com:7777:${username}:pw`);
    expect(curlLine(gateway, username, "pw")).toBe(
      `curl -x http://gw.example.com:7777 -U '${username}:pw' https://example.com/`,
    );
  });

  it("every target it accepts parses at the gateway to the same choices; every one it refuses, it names the problem", () => {
    const segment = (max: number) => fc.stringMatching(new RegExp(`^[a-z0-9]{0,${max}}$`));
    fc.assert(
      fc.property(
        fc.record({
          product: fc.constantFrom("residential" as const, "mobile" as const),
          country: fc.constantFrom("us", "de", "gb", "zz", "u", "usa", "DE"),
          state: segment(4),
          city: segment(6),
          asn: fc.oneof(fc.constant(""), fc.nat({ max: 2 ** 33 }).map(String)),
          session: segment(34),
          sesstime: fc.integer({ min: 0, max: 70 }).map(String),
        }),
        (chosen) => {
          const problem = targetProblem(chosen, gateway);
          if (problem !== null) {
            expect(problem).toMatch(/\w/);
            return;
          }
          const parsed = parseUsername(gatewayUsername(NAME, chosen, "user"), "user");
          if (!parsed.ok) throw new Error(`the gateway refused ${JSON.stringify(chosen)}: ${parsed.error}`);
          expect(parsed.value.product).toBe(chosen.product);
          expect(parsed.value.target.region).toBe(chosen.country.toLowerCase());
          expect(parsed.value.target.state).toBe(chosen.state || null);
          expect(parsed.value.target.city).toBe(chosen.state && chosen.city ? chosen.city : null);
          expect(parsed.value.target.sessionId).toBe(chosen.session || null);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses what the gateway would refuse: a city without a state, a session longer than the product allows, an unknown country", () => {
    expect(targetProblem(target({ city: "la" }), gateway)).toBe("A city needs its state.");
    expect(targetProblem(target({ session: "a", sesstime: "31" }), gateway)).toBe("Session time: 1-30 minutes.");
    expect(targetProblem(target({ product: "mobile", session: "a", sesstime: "60" }), gateway)).toBeNull();
    expect(targetProblem(target({ country: "usa" }), gateway)).toMatch(/^Country/);
    expect(targetProblem(target({ session: "has space" }), gateway)).toMatch(/^Session/);
  });
});

describe("the console's proxy-list download", () => {
  const choice = { sticky: true, count: 5, format: "txt" as const, protocol: "http" as const };

  it("asks the API for the generator's product and geo, normalized as the username writes them; sessions are the list's own", () => {
    const chosen = target({
      country: "DE",
      state: "be",
      city: "Berlin",
      asn: "03320",
      session: "mine",
      sesstime: "20",
    });
    expect(proxyListQuery(chosen, choice)).toEqual({
      product: "residential",
      country: "de",
      state: "be",
      city: "berlin",
      asn: 3320,
      session: "sticky",
      count: 5,
      sesstime: 20,
      format: "txt",
    });
    expect(proxyListQuery(target({ city: "berlin" }), { ...choice, sticky: false, format: "url" })).toEqual({
      product: "residential",
      country: "us",
      session: "rotating",
      format: "url",
      protocol: "http",
    });
  });

  it("puts the password in place of the API's placeholder, written as each format writes a value", () => {
    const line = (password: string) => `gw.example.com:7777:user_s1-type-res-region-us:${password}\n`;
    expect(withPassword(line(PASSWORD_PLACEHOLDER), "txt", "Ab$&1")).toBe(line("Ab$&1"));
    expect(withPassword(`http://u:${PASSWORD_PLACEHOLDER}@gw:7777\n`, "url", "a@b/c")).toBe(
      "http://u:a%40b%2Fc@gw:7777\n",
    );
    expect(withPassword(`host,port,username,password\r\nh,1,u,${PASSWORD_PLACEHOLDER}\r\n`, "csv", 'a,"b')).toBe(
      'host,port,username,password\r\nh,1,u,"a,""b"\r\n',
    );
  });
});
