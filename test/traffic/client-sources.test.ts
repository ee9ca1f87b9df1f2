import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, type RecordFields, reportUsage, traffic, usageRecord } from "../helpers/usage";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const iso = (ms: number) => new Date(ms).toISOString();
const recentRange = () => `from=${iso(Date.now() - HOUR)}&to=${iso(Date.now() + MINUTE)}`;

async function sources(account: TestAccount, subuserId: string, query = "") {
  return call("GET", `/v1/subusers/${subuserId}/sources${query}`, { token: account.token });
}

async function sourcesOf(account: TestAccount, subuserId: string): Promise<Array<Record<string, any>>> {
  const response = await sources(account, subuserId, "?limit=200");
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

async function newSourceEvents(account: TestAccount): Promise<Array<Record<string, any>>> {
  const response = await call("GET", "/v1/events?type=subuser.new_source", { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

/** Reports records and waits until the account's traffic counts `total` requests. */
async function ingested(account: TestAccount, records: RecordFields[], total: number) {
  expect((await reportUsage(records)).status).toBe(202);
  await eventually(
    () => traffic(account, "residential", recentRange()),
    (body) => body.rows[0].requests === total,
  );
}

const from = (subuser: TestSubuser, clientIp: string | null | undefined, fields: RecordFields = {}) => {
  const record = usageRecord(username(subuser.name), { client_ip: clientIp, ...fields });
  if (clientIp === undefined) delete record.client_ip;
  return record;
};

describe("GET /v1/subusers/{id}/sources", () => {
  it("groups client addresses into IPv4 /24 and IPv6 /64 blocks with first/last seen, requests and bytes; records without client_ip count in traffic only", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const t = Date.now() - 10 * MINUTE;
    const records = [
      from(subuser, "198.51.100.7", { ts: iso(t), bytes_in: 100, bytes_out: 10 }),
      from(subuser, "198.51.100.200", { ts: iso(t + MINUTE), bytes_in: 200, bytes_out: 20 }),
      from(subuser, "::ffff:198.51.100.9", { ts: iso(t + 2 * MINUTE), bytes_in: 1, bytes_out: 0 }),
      from(subuser, "2001:db8:1:2::5", { ts: iso(t + 3 * MINUTE), bytes_in: 300, bytes_out: 30 }),
      from(subuser, "2001:db8:1:2:ffff::1", { ts: iso(t + 4 * MINUTE), bytes_in: 400, bytes_out: 40 }),
      from(subuser, "2001:db8:1:3::1", { ts: iso(t + 5 * MINUTE), bytes_in: 500, bytes_out: 50 }),
      from(subuser, undefined, { ts: iso(t + 6 * MINUTE) }),
      from(subuser, null, { ts: iso(t + 7 * MINUTE) }),
    ];
    await ingested(account, records, records.length);
    expect(await sourcesOf(account, subuser.id)).toEqual([
      {
        block: "2001:db8:1:3::/64",
        first_seen: iso(t + 5 * MINUTE),
        last_seen: iso(t + 5 * MINUTE),
        requests: 1,
        bytes: 550,
      },
      {
        block: "2001:db8:1:2::/64",
        first_seen: iso(t + 3 * MINUTE),
        last_seen: iso(t + 4 * MINUTE),
        requests: 2,
        bytes: 770,
      },
      { block: "198.51.100.0/24", first_seen: iso(t), last_seen: iso(t + 2 * MINUTE), requests: 3, bytes: 331 },
    ]);
  });

  it("pages with cursors, counts usage delivered twice once, and answers another account's sub-user 404 like a missing one", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const other = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const { deliver } = holdUsageMessages();
    const batchId = crypto.randomUUID();
    const records = ["192.0.2.1", "198.51.100.1", "203.0.113.1"].map((ip, i) =>
      from(subuser, ip, { ts: iso(Date.now() - (3 - i) * MINUTE) }),
    );
    expect((await reportUsage(records, batchId)).status).toBe(202);
    expect((await reportUsage(records, batchId)).status).toBe(202);
    await deliver();
    await deliver();
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 4; page++) {
      const body = await json(await sources(account, subuser.id, `?limit=1${cursor}`));
      seen.push(...body.data.map((row: Record<string, any>) => `${row.block}:${row.requests}`));
      if (body.next_cursor === null) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(["203.0.113.0/24:1", "198.51.100.0/24:1", "192.0.2.0/24:1"]);

    const foreign = await sources(other, subuser.id);
    const missing = await sources(other, "sub_01JZZZZZZZZZZZZZZZZZZZZZZZ");
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const [a, b] = [await json(foreign), await json(missing)];
    expect(a.code).toBe("subuser_not_found");
    expect({ ...a, request_id: "" }).toEqual({ ...b, request_id: "" });
    expect((await sources(account, subuser.id, "?cursor=bm9wZQ")).status).toBe(422);
  });
});

describe("subuser.new_source events", () => {
  it("are opt-in per sub-user (alert_on_new_source, default false, settable on create and update)", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const watched = await createSubuser(account, { alert_on_new_source: true });
    const quiet = await createSubuser(account);
    expect((watched as unknown as Record<string, unknown>).alert_on_new_source).toBe(true);
    expect((quiet as unknown as Record<string, unknown>).alert_on_new_source).toBe(false);
    await ingested(account, [from(watched, "198.51.100.7"), from(quiet, "203.0.113.7")], 2);
    const events = await eventually(
      () => newSourceEvents(account),
      (list) => list.length >= 1,
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual({
      subuser: watched.id,
      new_blocks: 1,
      blocks: ["198.51.100.0/24"],
      window_minutes: 15,
    });
    // A block already seen raises nothing; records without client_ip neither.
    await ingested(account, [from(watched, "198.51.100.99"), from(watched, undefined)], 4);

    const patched = await call("PATCH", `/v1/subusers/${quiet.id}`, {
      token: account.token,
      body: { alert_on_new_source: true },
    });
    expect((await json(patched)).alert_on_new_source).toBe(true);
    await ingested(account, [from(quiet, "192.0.2.44")], 5);
    const after = await eventually(
      () => newSourceEvents(account),
      (list) => list.length >= 2,
    );
    expect(after.map((event) => [event.data.subuser, event.data.blocks])).toEqual([
      [quiet.id, ["192.0.2.0/24"]],
      [watched.id, ["198.51.100.0/24"]],
    ]);
  });

  it("are at most one per sub-user per 15 minutes, the next one counting every new block since", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now() + MINUTE;
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 10 });
    const rotating = await createSubuser(account, { alert_on_new_source: true });
    await ingested(account, [from(rotating, "198.51.100.1")], 1);
    await eventually(
      () => newSourceEvents(account),
      (list) => list.length === 1,
    );
    // A rotating client: 20 new /24s within the window raise no event.
    const burst = Array.from({ length: 20 }, (_, i) => from(rotating, `10.${i}.0.1`));
    await ingested(account, burst, 21);
    vi.setSystemTime(t0 + 5 * MINUTE);
    await ingested(account, [from(rotating, "10.99.0.1")], 22);
    expect(await newSourceEvents(account)).toHaveLength(1);
    expect(await sourcesOf(account, rotating.id)).toHaveLength(22);
    // Past the window, the next usage (even from a known block) brings one event counting all 21.
    vi.setSystemTime(t0 + 16 * MINUTE);
    await ingested(account, [from(rotating, "198.51.100.2")], 23);
    const events = await eventually(
      () => newSourceEvents(account),
      (list) => list.length === 2,
    );
    expect(events[0]?.data.new_blocks).toBe(21);
    expect(events[0]?.data.blocks).toHaveLength(10);
  });
});
