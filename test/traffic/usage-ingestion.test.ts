import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { domainContext } from "../../src/domain/context";
import { settleAccountUsage } from "../../src/domain/traffic/apply-usage";
import { accountStore } from "../../src/domain/traffic/store";
import { TrafficStoreClient } from "../../src/durable-objects/traffic-store";
import { type CellRow, cellOf, sampleOf } from "../../src/durable-objects/traffic-store/contract";
import { UsageBatchLedgerClient } from "../../src/durable-objects/usage-batch-ledger";
import { buyBandwidth, createAccount } from "../helpers/accounts";
import { BASE, call, env, GATEWAY_TOKEN, gateway, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import {
  eventually,
  holdUsageMessages,
  raceTheFirstPost,
  reportUsage,
  sentParts,
  settleUsage,
  traffic,
  usageMessageBody,
  usageRecord,
} from "../helpers/usage";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The hour up to `at` (and the minute after). */
const window = (at = Date.now()) =>
  `from=${new Date(at - HOUR).toISOString()}&to=${new Date(at + 60_000).toISOString()}`;
/** `n` records of a sub-user (rotating username). */
const recordsOf = (subuser: { name: string }, n: number) =>
  Array.from({ length: n }, () => usageRecord(username(subuser.name)));

describe("POST /internal/gateway/usage (usage reports)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("accepts a batch, drops records of unknown sub-users or of a product their sub-user lacks and counts them", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const live = await createSubuser(account);
    const response = await reportUsage([
      usageRecord(username(live.name)),
      usageRecord(username(live.name, "type-mob-region-us"), { product: "mobile" }),
      usageRecord(username("nosuchname")),
      usageRecord("not-a-username"),
    ]);
    expect(response.status).toBe(202);
    expect(await json(response)).toEqual({ accepted: 1, dropped: 3, duplicate: false });
    const answer = await eventually(
      () => traffic(account, "residential", window()),
      (b) => b.rows[0].requests === 1,
    );
    expect(answer.rows[0]).toMatchObject({ requests: 1, bytes_in: 1000, bytes_out: 100 });
  });

  it("counts a deleted sub-user's records while their minute began within 60 s of the deletion (the drain), and drops and counts later ones", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const kept = await createSubuser(account);
    const deleted = await createSubuser(account);
    // The store knows both sub-users' account before the deletion (as when usage was flowing).
    expect((await reportUsage(recordsOf(kept, 1))).status).toBe(202);
    await eventually(
      () => traffic(account, "residential", window()),
      (b) => b.rows[0].requests === 1,
    );
    const at = Date.now();
    expect((await call("DELETE", `/v1/subusers/${deleted.id}`, { token: account.token })).status).toBe(200);
    const minuteOf = (t: number) => t - (t % 60_000);
    const drained = (offsetMs: number) =>
      usageRecord(username(deleted.name), { ts: new Date(at + offsetMs).toISOString(), bytes_in: 1_000_000 });
    // Before the deletion, and in minutes that began at most 60 s after it: counted (in flight, drained).
    const inside = [drained(-5_000), drained(30_000), drained(minuteOf(at + 60_000) - at)];
    // Minutes that began later than 60 s after the deletion: dropped.
    const outside = [drained(minuteOf(at + 60_000) + 60_000 - at), drained(10 * 60_000)];
    const response = await reportUsage([...inside, ...outside]);
    expect(await json(response)).toEqual({ accepted: 5, dropped: 0, duplicate: false });
    const range = `from=${new Date(at - HOUR).toISOString()}&to=${new Date(at + HOUR).toISOString()}`;
    const rows = await eventually(
      () => traffic(account, "residential", `${range}&group_by=subuser`),
      (b) => b.rows.some((row: { subuser: string }) => row.subuser === deleted.id),
    );
    expect(rows.rows.find((row: { subuser: string }) => row.subuser === deleted.id)).toMatchObject({ requests: 3 });
    expect(await accountStore(domainContext(env), account.id).droppedUsage()).toEqual([
      { day: at - (at % DAY), records: 2, bytes: 2 * 1_000_100 },
    ]);
    await settleUsage(account);
    const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(pool.gb_used).toBe((1100 + 3 * 1_000_100) / 1e9);
  });

  it("counts a batch_id sent again once, answering duplicate: true with the first counts", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const tenthOfAGb = { bytes_in: 99_999_000, bytes_out: 1000 };
    const records = [usageRecord(username(subuser.name), tenthOfAGb), usageRecord(username(subuser.name), tenthOfAGb)];
    const first = await json(await reportUsage(records, "gw-batch-1"));
    const again = await json(await reportUsage(records, "gw-batch-1"));
    expect(first).toEqual({ accepted: 2, dropped: 0, duplicate: false });
    expect(again).toEqual({ accepted: 2, dropped: 0, duplicate: true });
    await eventually(
      () => traffic(account, "residential", window()),
      (b) => b.rows[0].requests === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await traffic(account, "residential", window())).rows[0].requests).toBe(2);
    await settleUsage(account);
    const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(pool.gb_used).toBe(0.2);
    // Nothing of it reaches another account's traffic or request log.
    const other = await createAccount({ bandwidthGb: 1 });
    expect((await traffic(other, "residential", window())).rows[0].requests).toBe(0);
    expect((await json(await call("GET", "/v1/residential/requests", { token: other.token }))).data).toEqual([]);
  });

  it("counts a batch_id posted twice at once once: exactly one answer is duplicate: false, both with the same counts", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const records = recordsOf(subuser, 3);
    const batchId = crypto.randomUUID();
    const answers = await Promise.all([0, 1].map(async () => json(await reportUsage(records, batchId))));
    expect(answers.filter((answer) => answer.duplicate === false)).toHaveLength(1);
    expect(answers.map(({ accepted, dropped }) => ({ accepted, dropped }))).toEqual([
      { accepted: 3, dropped: 0 },
      { accepted: 3, dropped: 0 },
    ]);
    await eventually(
      () => traffic(account, "residential", window()),
      (b) => b.rows[0].requests === 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await traffic(account, "residential", window())).rows[0].requests).toBe(3);
  });

  it("enqueues nothing for a batch recorded before: its messages went with the first post", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent } = holdUsageMessages();
    const batchId = crypto.randomUUID();
    expect(await json(await reportUsage(recordsOf(subuser, 3), batchId))).toEqual({
      accepted: 3,
      dropped: 0,
      duplicate: false,
    });
    const enqueued = sent.length;
    expect(enqueued).toBe(1);
    expect(await json(await reportUsage(recordsOf(subuser, 3), batchId))).toEqual({
      accepted: 3,
      dropped: 0,
      duplicate: true,
    });
    expect(sent).toHaveLength(enqueued);
  });

  it("recognises a batch_id for 7 days: a post 6 days after the first is a duplicate, one 8 days after is accepted again", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent } = holdUsageMessages();
    vi.useFakeTimers({ toFake: ["Date"] });
    const first = Date.now();
    const batchId = crypto.randomUUID();
    const records = recordsOf(subuser, 2);
    expect(await json(await reportUsage(records, batchId))).toEqual({ accepted: 2, dropped: 0, duplicate: false });
    vi.setSystemTime(first + 6 * DAY);
    expect(await json(await reportUsage(records, batchId))).toEqual({ accepted: 2, dropped: 0, duplicate: true });
    expect(sent).toHaveLength(1);
    vi.setSystemTime(first + 8 * DAY);
    expect(await json(await reportUsage(records, batchId))).toEqual({ accepted: 2, dropped: 0, duplicate: false });
    expect(sent).toHaveLength(2);
  });

  it("splits one sub-user's many sessions across queue messages, so a batch never exceeds the queue's message limit", {
    timeout: 30_000,
  }, async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const names = Array.from({ length: 150 }, (_, i) =>
      username(subuser.name, `type-res-region-us-session-s${i}-sesstime-30`),
    );
    for (const name of names) {
      const decision = await json(
        await call("POST", "/internal/gateway/authorize", {
          token: GATEWAY_TOKEN,
          body: { username: name, password: subuser.password, source_ip: "198.51.100.10", product: "residential" },
        }),
      );
      expect(decision.allow).toBe(true);
    }
    const records = Array.from({ length: 1000 }, (_, i) =>
      usageRecord(names[i % names.length] as string, { target_host: `host-${i}.example.com` }),
    );
    const response = await reportUsage(records);
    expect(response.status).toBe(202);
    expect((await json(response)).accepted).toBe(1000);
    const sessions = await eventually(
      async () => json(await call("GET", "/v1/residential/sessions?limit=200", { token: account.token })),
      (body) => body.data.reduce((sum: number, session: { requests: number }) => sum + session.requests, 0) === 1000,
    );
    expect(sessions.data).toHaveLength(150);
  });

  it("refuses an invalid record with 422 naming its index, and counts nothing of the batch", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const response = await reportUsage([
      usageRecord(username(subuser.name)),
      usageRecord(username(subuser.name), { bytes_in: -5 }),
    ]);
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body.code).toBe("invalid_request");
    expect(body.details[0].field).toBe("records.1.bytes_in");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await traffic(account, "residential", window())).rows[0].requests).toBe(0);
    expect((await reportUsage([])).status).toBe(422);
    const tooMany = recordsOf(subuser, 1001);
    expect((await reportUsage(tooMany)).status).toBe(422);
  });

  it("accepts a gzip-encoded body", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const body = JSON.stringify({ batch_id: crypto.randomUUID(), records: [usageRecord(username(subuser.name))] });
    const gzipped = await new Response(
      new Blob([body]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    const response = await exports.default.fetch(
      new Request(`${BASE}/internal/gateway/usage`, {
        method: "POST",
        body: gzipped,
        headers: {
          Authorization: `Bearer ${GATEWAY_TOKEN}`,
          "Content-Type": "application/json",
          "Content-Encoding": "gzip",
        },
      }),
    );
    expect(response.status).toBe(202);
    expect((await json(response)).accepted).toBe(1);
    await eventually(
      () => traffic(account, "residential", window()),
      (b) => b.rows[0].requests === 1,
    );
    const broken = await call("POST", "/internal/gateway/usage", {
      token: GATEWAY_TOKEN,
      body: "not gzip",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
    });
    expect(broken.status).toBe(400);
    expect((await json(broken)).code).toBe("invalid_json");
  });

  it("bounds gzip bodies: 413 past 4 MB decoded (even when the trailer understates it), 400 when the trailer disagrees", async () => {
    const gzip = async (text: string) =>
      new Uint8Array(
        await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
      );
    const post = async (body: Uint8Array) => {
      const response = await exports.default.fetch(
        new Request(`${BASE}/internal/gateway/usage`, {
          method: "POST",
          body,
          headers: {
            Authorization: `Bearer ${GATEWAY_TOKEN}`,
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
          },
        }),
      );
      return { status: response.status, code: (await json(response)).code };
    };
    /** The same bytes with the trailer's decoded size (ISIZE, the last 4 bytes) replaced. */
    const claiming = (bytes: Uint8Array, decodedSize: number) => {
      const forged = bytes.slice();
      new DataView(forged.buffer).setUint32(forged.byteLength - 4, decodedSize, true);
      return forged;
    };
    // 5 MB of spaces compresses to a few KB: a bomb for a decoder that trusts what it is sent.
    const bomb = await gzip(`{"batch_id":"b","records":[]${" ".repeat(5_000_000)}}`);
    expect(bomb.byteLength).toBeLessThan(20_000);
    expect(await post(bomb)).toEqual({ status: 413, code: "payload_too_large" });
    expect(await post(claiming(bomb, 1_000))).toEqual({ status: 400, code: "invalid_json" });
    const small = await gzip(JSON.stringify({ batch_id: "b", records: [] }));
    expect(await post(claiming(small, 100))).toEqual({ status: 400, code: "invalid_json" });
    expect(await post(claiming(small, 1))).toEqual({ status: 400, code: "invalid_json" });
    // A compressed body above 4 MB is refused before anything is decoded.
    expect(await post(new Uint8Array(4_000_001))).toEqual({ status: 413, code: "payload_too_large" });
  });

  it("applies an account's parts of one consumer batch together (one store call), each once even when some were applied before", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent, deliver } = holdUsageMessages();
    const batchOf = (n: number) => recordsOf(subuser, n);
    expect((await reportUsage(batchOf(2))).status).toBe(202);
    expect((await deliver()).retryMessages).toHaveLength(0);
    // The next delivery holds the first message again (a redelivery) and two new ones.
    expect((await reportUsage(batchOf(3))).status).toBe(202);
    expect((await reportUsage(batchOf(4))).status).toBe(202);
    expect(sent).toHaveLength(3);
    const ingest = vi.spyOn(TrafficStoreClient.prototype, "ingest");
    const delivered = await deliver();
    expect(delivered.retryMessages).toHaveLength(0);
    expect(delivered.explicitAcks).toHaveLength(3);
    expect(ingest).toHaveBeenCalledTimes(1);
    expect((await ingest.mock.results[0]?.value)?.applied).toBe(2);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 9 });
    await settleUsage(account);
    const balance = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(balance.gb_used).toBe((9 * 1100) / 1e9);
  });

  it("splits an account's parts across store calls when one call would pass an RPC's size limit, each part applied once", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent, deliverTo } = holdUsageMessages();
    for (const n of [2, 3, 4]) expect((await reportUsage(recordsOf(subuser, n))).status).toBe(202);
    expect(sent).toHaveLength(3);
    // Each message weighs 5 MB of JSON (padding): two of them pass one store call's 8 MB.
    const heavy = await Promise.all(
      sent.map(async ({ body }) => ({ body: JSON.stringify(await usageMessageBody(body)) + " ".repeat(5_000_000) })),
    );
    const ingest = vi.spyOn(TrafficStoreClient.prototype, "ingest");
    // A copy of the first message beside them (a redelivery) is applied once.
    const delivered = await deliverTo("usage-accounts-0", [...heavy, heavy[0] as { body: string }]);
    expect(delivered.retryMessages).toHaveLength(0);
    expect(delivered.explicitAcks).toHaveLength(4);
    expect(ingest).toHaveBeenCalledTimes(3);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 9 });
  });

  it("applies messages of packed parts, or of one account's part as sent before (JSON text or value, cell rows or named cells), and retries an unreadable one alone", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent, deliver } = holdUsageMessages();
    const batchOf = (n: number) => recordsOf(subuser, n);
    expect((await reportUsage(batchOf(2))).status).toBe(202);
    expect((await reportUsage(batchOf(3))).status).toBe(202);
    expect((await reportUsage(batchOf(4))).status).toBe(202);
    // Messages travel gzipped.
    expect(sent.every((message) => message.body instanceof Uint8Array)).toBe(true);
    const packed = await usageMessageBody(sent[0]?.body);
    expect(packed.parts).toHaveLength(1);
    expect(packed.parts[0].cells.every((cell: unknown) => Array.isArray(cell) && cell.length === 14)).toBe(true);
    // One account's part alone, as the queue carried them before: a JSON value with cell rows (without status and
    // error code, as before they were kept), and named cells.
    const single = async (body: unknown) => {
      const [part] = (await usageMessageBody(body)).parts;
      return {
        ...part,
        cells: part.cells.map((row: CellRow) => row.slice(0, 12)),
        samples: part.samples.map(sampleOf),
      };
    };
    const asValue = sent[1] as { body: unknown };
    asValue.body = await single(asValue.body);
    const namedCells = sent[2] as { body: unknown };
    const named = await single(namedCells.body);
    named.cells = named.cells.map((row: CellRow) => cellOf(row));
    namedCells.body = JSON.stringify(named);
    sent.push({ body: "{not json" }, { body: "{}" });
    const delivered = await deliver();
    expect(delivered.retryMessages.map((message) => message.msgId).sort()).toEqual(["m3", "m4"]);
    expect(delivered.explicitAcks.sort()).toEqual(["m0", "m1", "m2"]);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({
      requests: 9,
      bytes_in: 9000,
      bytes_out: 900,
    });
  });

  it("applies a message that failed half-way exactly once when the queue redelivers it", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    // Keep the messages instead of letting the broker deliver them, then deliver them by hand.
    const { sent, deliver } = holdUsageMessages();
    const records = Array.from({ length: 5 }, () => usageRecord(username(subuser.name), { bytes_in: 200_000_000 }));
    expect((await reportUsage(records)).status).toBe(202);
    expect(sent).toHaveLength(1);
    // First delivery: the account's store applies and meters the message, then the worker crashes before D1.
    const ingest = TrafficStoreClient.prototype.ingest;
    vi.spyOn(TrafficStoreClient.prototype, "ingest").mockImplementationOnce(async function (
      this: TrafficStoreClient,
      ...args: Parameters<TrafficStoreClient["ingest"]>
    ) {
      await ingest.apply(this, args);
      throw new Error("crash after the store");
    });
    const failed = await deliver();
    expect(failed.retryMessages).toHaveLength(1);
    const balance = async () => json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect((await balance()).gb_used).toBe(0);
    // Redelivered: the store skips what it applied and hands out the settlement D1 never got; a third delivery
    // changes nothing.
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await balance()).gb_used).toBe(1.0000005);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 5 });
    const store = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));
    await runDurableObjectAlarm(store);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 5 });
  });
});

describe("usage is billed exactly once, whatever arrives twice", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  /** Accounts with capped sub-users, and batches of records spread over all of them. */
  async function fleet(accounts: number, subusersEach: number) {
    const all = await Promise.all(
      Array.from({ length: accounts }, async () => {
        const account = await createAccount({ bandwidthGb: 10 });
        const subusers = [];
        for (let i = 0; i < subusersEach; i++) subusers.push(await createSubuser(account, { traffic_limit_gb: 100 }));
        return { account, subusers };
      }),
    );
    const sent = new Map<string, number>();
    const batch = (size: number) =>
      Array.from({ length: size }, (_, i) => {
        const { subusers } = all[i % all.length] as (typeof all)[number];
        const subuser = subusers[Math.floor(i / all.length) % subusers.length] as (typeof subusers)[number];
        sent.set(subuser.id, (sent.get(subuser.id) ?? 0) + 1);
        return usageRecord(username(subuser.name), { bytes_in: 1_000_000, bytes_out: 1 });
      });
    return { all, sent, batch };
  }

  /** What every figure must show once the usage landed: traffic per sub-user and per hour, pools, months. */
  async function expectCountedOnce({ all, sent }: Awaited<ReturnType<typeof fleet>>, at = Date.now()) {
    for (const { account, subusers } of all) {
      const expected = subusers.reduce((sum, subuser) => sum + (sent.get(subuser.id) ?? 0), 0);
      const bySubuser = await eventually(
        () => traffic(account, "residential", `${window(at)}&group_by=subuser`),
        (b) => b.rows.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0) >= expected,
      );
      for (const subuser of subusers) {
        const row = bySubuser.rows.find((r: { subuser: string }) => r.subuser === subuser.id);
        expect(row?.requests ?? 0).toBe(sent.get(subuser.id) ?? 0);
      }
      const byHour = await traffic(account, "residential", `${window(at)}&group_by=hour`);
      expect(byHour.rows.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0)).toBe(expected);
      await settleUsage(account);
      const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
      expect(Math.round(pool.gb_used * 1e9)).toBe(expected * 1_000_001);
      for (const subuser of subusers) {
        const body = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
        expect(Math.round(body.traffic_used_gb * 1e9)).toBe((sent.get(subuser.id) ?? 0) * 1_000_001);
      }
    }
  }

  it("counts one batch_id posted three times at once (racing gateway retries) once in traffic, pools and months", {
    timeout: 60_000,
  }, async () => {
    const state = await fleet(3, 4);
    const batches = Array.from({ length: 6 }, () => ({ id: crypto.randomUUID(), records: state.batch(400) }));
    const answers = await Promise.all(
      batches.flatMap(({ id, records }) => [0, 1, 2].map(async () => json(await reportUsage(records, id)))),
    );
    for (let b = 0; b < batches.length; b++) {
      const copies = answers.slice(b * 3, b * 3 + 3);
      expect(copies.every((answer) => answer.accepted === 400 && answer.dropped === 0)).toBe(true);
      expect(copies.filter((answer) => answer.duplicate === false)).toHaveLength(1);
    }
    await expectCountedOnce(state);
  });

  it("applies parts with the same key once when one consumer batch holds them twice (a copy next to its original)", {
    timeout: 30_000,
  }, async () => {
    const state = await fleet(2, 3);
    const { sent, deliver } = holdUsageMessages();
    const batchId = crypto.randomUUID();
    const records = state.batch(300);
    expect((await reportUsage(records, batchId)).status).toBe(202);
    // A copy racing the first post (it recalled the batch before the first recorded it) enqueues the same parts again.
    raceTheFirstPost();
    expect(await json(await reportUsage(records, batchId))).toEqual({ accepted: 300, dropped: 0, duplicate: true });
    expect(sent.length).toBeGreaterThan(0);
    expect(await sentParts(sent.slice(sent.length / 2))).toEqual(await sentParts(sent.slice(0, sent.length / 2)));
    // Every message twice more in the same delivery, then the whole lot redelivered.
    sent.push(...sent.map((message) => ({ body: message.body })));
    const first = await deliver();
    expect(first.retryMessages).toHaveLength(0);
    expect(first.explicitAcks).toHaveLength(sent.length);
    expect((await deliver()).retryMessages).toHaveLength(0);
    await expectCountedOnce(state);
  });

  it.each([
    ["10 minutes", 10 * MINUTE],
    ["3 hours", 3 * HOUR],
  ])(
    "a post that enqueued its usage and crashed before its ledger record, retried %s later, is counted once (the stores look back to the usage's time)",
    {
      timeout: 30_000,
    },
    async (_, later) => {
      const state = await fleet(2, 2);
      const { sent, deliver } = holdUsageMessages();
      vi.useFakeTimers({ toFake: ["Date"] });
      const first = Date.now() + DAY;
      vi.setSystemTime(first);
      const batchId = crypto.randomUUID();
      const records = state.batch(200);
      vi.spyOn(UsageBatchLedgerClient.prototype, "record").mockRejectedValueOnce(new Error("crash before the record"));
      expect((await reportUsage(records, batchId)).status).toBe(500);
      expect((await deliver()).retryMessages).toHaveLength(0);
      const firstMessages = sent.splice(0);
      // The gateway retries: the ledger never heard of the batch, so its parts are enqueued again, stamped later.
      vi.setSystemTime(first + later);
      expect(await json(await reportUsage(records, batchId))).toEqual({ accepted: 200, dropped: 0, duplicate: false });
      expect(await sentParts(sent)).toEqual(await sentParts(firstMessages));
      const bodies = await Promise.all(sent.map((message) => usageMessageBody(message.body)));
      expect(bodies.every((body) => body.receivedAt === first + later)).toBe(true);
      expect((await deliver()).retryMessages).toHaveLength(0);
      const again = await json(await reportUsage(records, batchId));
      expect(again).toEqual({ accepted: 200, dropped: 0, duplicate: true });
      await expectCountedOnce(state, first);
    },
  );

  it("a store restarting in the middle of a minute (aborted between two ingests of it) loses nothing and counts nothing twice", {
    timeout: 60_000,
  }, async () => {
    const state = await fleet(1, 3);
    const { account, subusers } = state.all[0] as (typeof state.all)[number];
    const sticky = subusers[0] as (typeof subusers)[number];
    const user = username(sticky.name, "type-res-region-us-session-mid1-sesstime-10");
    // Every ingest of this test lands in one minute of the store's clock.
    vi.useFakeTimers({ toFake: ["Date"] });
    const minute = Date.now() + 2 * DAY;
    vi.setSystemTime(minute - (minute % 60_000) + 1_000);
    const decision = await json(
      await gateway("/authorize", {
        username: user,
        password: sticky.password,
        source_ip: "198.51.100.9",
        product: "residential",
      }),
    );
    const sessionRecords = (n: number) =>
      Array.from({ length: n }, () =>
        usageRecord(user, {
          session: decision.session.id,
          bytes_in: 1_000_000,
          bytes_out: 1,
          client_ip: "203.0.113.77",
        }),
      );
    const firstBatch = { id: crypto.randomUUID(), records: [...state.batch(20), ...sessionRecords(2)] };
    const secondBatch = { id: crypto.randomUUID(), records: [...state.batch(30), ...sessionRecords(3)] };
    state.sent.set(sticky.id, (state.sent.get(sticky.id) ?? 0) + 5);
    const counted = (requests: number) =>
      eventually(
        () => traffic(account, "residential", window()),
        (body) => body.rows[0].requests === requests,
      );
    expect((await reportUsage(firstBatch.records, firstBatch.id)).status).toBe(202);
    await counted(22);
    await abortAllDurableObjects();
    // The second ingest of the minute, and a copy of the first racing it (recalled before the first recorded it).
    expect((await reportUsage(secondBatch.records, secondBatch.id)).status).toBe(202);
    raceTheFirstPost();
    expect((await reportUsage(firstBatch.records, firstBatch.id)).status).toBe(202);
    await counted(55);
    await abortAllDurableObjects();
    await expectCountedOnce(state);
    const session = await json(
      await call("GET", `/v1/residential/sessions/${decision.session.id}`, { token: account.token }),
    );
    expect(session).toMatchObject({ requests: 5, bytes_used: 5 * 1_000_001 });
    const log = await json(await call("GET", "/v1/residential/requests?limit=1000", { token: account.token }));
    expect(log.data).toHaveLength(55);
    const sources = await json(await call("GET", `/v1/subusers/${sticky.id}/sources`, { token: account.token }));
    expect(sources.data.find((source: { block: string }) => source.block === "203.0.113.0/24")?.requests).toBe(5);
  });

  it("a settlement applied twice changes nothing in D1: pools, months and threshold events count it once", async () => {
    const account = await createAccount();
    await buyBandwidth(account, 1);
    const subuser = await createSubuser(account, { traffic_limit_gb: 1 });
    const ctx = domainContext(env);
    expect(
      (await reportUsage([usageRecord(username(subuser.name), { bytes_in: 100_000_000, bytes_out: 0 })])).status,
    ).toBe(202);
    const gbUsed = async () =>
      (await json(await call("GET", "/v1/residential/balance", { token: account.token }))).gb_used;
    await eventually(gbUsed, (gb) => gb === 0.1); // the first usage settles at once
    // 800 MB more: 90% of the pool and of the cap, metered in the store and not settled yet.
    const { deliver } = holdUsageMessages();
    expect(
      (await reportUsage([usageRecord(username(subuser.name), { bytes_in: 800_000_000, bytes_out: 0 })])).status,
    ).toBe(202);
    const settle = vi.spyOn(TrafficStoreClient.prototype, "confirmSettlement");
    const settleOnce = vi.fn();
    settle.mockImplementation(async () => {
      settleOnce();
      return null;
    });
    expect((await deliver()).retryMessages).toHaveLength(0);
    // The settlement reached D1, and its confirmation to the store was lost: D1 is told it again.
    const settlement = await accountStore(ctx, account.id).settlement();
    expect(settlement?.pools).toEqual([{ product: "residential", bytes: 800_000_000 }]);
    expect(await gbUsed()).toBe(0.9);
    vi.restoreAllMocks();
    await settleAccountUsage(ctx, account.id, 0);
    await settleAccountUsage(ctx, account.id, 0);
    expect(await gbUsed()).toBe(0.9);
    const body = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
    expect(body.traffic_used_gb).toBe(0.9);
    const { results } = await env.DB.prepare(
      "SELECT json_extract(payload, '$.scope') AS scope, json_extract(payload, '$.threshold_percent') AS t FROM events WHERE account_id = ? AND type = 'traffic.threshold' ORDER BY scope",
    )
      .bind(account.id)
      .all();
    expect(results).toEqual([
      { scope: "pool", t: 80 },
      { scope: "subuser", t: 80 },
    ]);
    expect(await accountStore(ctx, account.id).settlement()).toBeNull();
  });
});
