import { describe, expect, it } from "vitest";
import { parseUsername } from "../../src/domain/gateway/username";
import { accountShare, type OwnedRecord } from "../../src/domain/traffic/aggregate";
import type { UsageRecord } from "../../src/domain/traffic/usage-records";
import { sessionIdAt, sessionKey } from "../../src/platform/sticky-sessions";
import { usageRecord } from "../helpers/usage-record";

// The usage route's share of sticky usage decided at the node: per session key, generation and minute.

const MINUTE = 60_000;
const T = Date.UTC(2026, 5, 1, 12, 0, 10);
const OWNER = { subuserId: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", gateName: "abc" };

function entry(username: string, ts: number, fields: Record<string, unknown> = {}): OwnedRecord {
  const record = usageRecord(username, { ts: new Date(ts).toISOString(), ...fields }) as unknown as UsageRecord;
  const parsed = parseUsername(username, "user");
  if (!parsed.ok) throw new Error(parsed.error);
  return { record, owner: OWNER, ts, target: parsed.value.target };
}

describe("accountShare: sticky usage a node decided (session_gen)", () => {
  it("sums records per key, generation and minute, named provisionally from the first record's time", () => {
    const user = "user_abc-type-res-region-us-state-ca-session-k1-sesstime-10";
    const share = accountShare("usr_x", [
      entry(user, T + 30_000, { session_gen: 0 }),
      entry(user, T, { session_gen: 0 }),
      entry(user, T + MINUTE, { session_gen: 0 }),
      entry(user, T + 5, { session_gen: 1, session: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    ]);
    const key = sessionKey(user);
    const shape = share.sessionDeltas.map((d) => [
      d.key,
      d.generation,
      d.id,
      d.startedAt,
      d.expiresAt,
      d.usage.requests,
    ]);
    expect(shape).toEqual([
      [key, 0, sessionIdAt(key, 0, T), T, T + 10 * MINUTE, 2],
      [key, 0, sessionIdAt(key, 0, T), T, T + 10 * MINUTE, 1],
      // `session_gen` over `session`: the store names it.
      [key, 1, sessionIdAt(key, 1, T + 5), T + 5, T + 5 + 10 * MINUTE, 1],
    ]);
    expect(share.sessionDeltas[0]).toMatchObject({
      subuserId: OWNER.subuserId,
      gateName: "abc",
      product: "residential",
      sessionId: "k1",
      region: "us",
      state: "ca",
      city: null,
      asn: null,
      usage: { firstTs: T, lastTs: T + 30_000 },
    });
    expect(share.sessions).toEqual([]);
  });

  it("starts the next provisional session when a minute's first record is past the previous one's expiry", () => {
    const user = "user_abc-type-res-region-us-session-k2-sesstime-1";
    const share = accountShare("usr_x", [
      entry(user, T, { session_gen: 0 }),
      entry(user, T + 40_000, { session_gen: 0 }),
      entry(user, T + 70_000, { session_gen: 0 }),
      entry(user, T + 2 * MINUTE, { session_gen: 0 }),
    ]);
    const key = sessionKey(user);
    expect(share.sessionDeltas.map((d) => [d.id, d.startedAt, d.usage.requests])).toEqual([
      [sessionIdAt(key, 0, T), T, 2],
      [sessionIdAt(key, 0, T + 70_000), T + 70_000, 1],
      [sessionIdAt(key, 0, T + 70_000), T + 70_000, 1],
    ]);
  });

  it("is the same share for the same records (a retried batch's parts are the same)", () => {
    const user = "user_abc-type-res-region-us-session-k3-sesstime-5";
    const entries = [entry(user, T + 9, { session_gen: 2 }), entry(user, T, { session_gen: 2 })];
    expect(accountShare("usr_x", entries)).toEqual(accountShare("usr_x", entries));
  });
});
