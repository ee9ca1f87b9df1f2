import { runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TrafficStoreClient } from "../../durable-objects/traffic-store-client";
import { createAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { BASE, call, env, GATEWAY_TOKEN, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, reportUsage, traffic, usageRecord } from "../helpers/usage";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const window = () =>
  `from=${new Date(Date.now() - HOUR).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
/** `n` records of a sub-user (rotating username). */
const recordsOf = (subuser: { name: string }, n: number) =>
  Array.from({ length: n }, () => usageRecord(username(subuser.name)));

describe("POST /internal/gateway/usage (usage reports)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("accepts a batch, drops records of unknown or deleted sub-users and counts them", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const live = await createSubuser(account);
    const deleted = await createSubuser(account);
    await call("DELETE", `/v1/subusers/${deleted.id}`, { token: account.token });
    const response = await reportUsage([
      usageRecord(username(live.name)),
      usageRecord(username(deleted.name)),
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
    const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(pool.gb_used).toBe(0.2);
    // Nothing of it reaches another account's traffic or request log.
    const other = await createAccount({ bandwidthGb: 1 });
    expect((await traffic(other, "residential", window())).rows[0].requests).toBe(0);
    expect((await json(await call("GET", "/v1/residential/requests", { token: other.token }))).data).toEqual([]);
  });

  it("forgets batch ids and applied messages after 7 days (the cron prunes D1's dedupe tables)", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const batchId = crypto.randomUUID();
    expect((await reportUsage([usageRecord(username(subuser.name))], batchId)).status).toBe(202);
    const rows = async () => {
      const batches = await env.DB.prepare("SELECT count(*) AS n FROM usage_batches WHERE id = ?")
        .bind(batchId)
        .first();
      const applied = await env.DB.prepare("SELECT count(*) AS n FROM usage_applied WHERE message_key LIKE ?")
        .bind(`${batchId}:%`)
        .first();
      return [batches?.n, applied?.n];
    };
    await eventually(rows, ([batches, applied]) => batches === 1 && applied === 1);
    await runCron(Date.now() + 6 * DAY);
    expect(await rows()).toEqual([1, 1]);
    await runCron(Date.now() + 7 * DAY + 60_000);
    expect(await rows()).toEqual([0, 0]);
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

  it("applies an account's messages of one consumer batch together (one store call), each once even when some were applied before", async () => {
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
    expect(await ingest.mock.results[0]?.value).toBe(2);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 9 });
    const balance = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(balance.gb_used).toBe((9 * 1100) / 1e9);
  });

  it("applies messages sent as JSON text with cell rows, or in the formats before (a JSON value, named cells), and retries an unreadable one alone", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent, deliver } = holdUsageMessages();
    const batchOf = (n: number) => recordsOf(subuser, n);
    expect((await reportUsage(batchOf(2))).status).toBe(202);
    expect((await reportUsage(batchOf(3))).status).toBe(202);
    expect((await reportUsage(batchOf(4))).status).toBe(202);
    expect(sent.map((message) => typeof message.body)).toEqual(["string", "string", "string"]);
    const rows = JSON.parse(sent[0]?.body as string).cells;
    expect(rows.every((cell: unknown) => Array.isArray(cell) && cell.length === 12)).toBe(true);
    const asValue = sent[1] as { body: unknown };
    asValue.body = JSON.parse(asValue.body as string);
    const namedCells = sent[2] as { body: unknown };
    const named = JSON.parse(namedCells.body as string);
    named.cells = named.cells.map((row: unknown[]) => {
      const [minute, product, subuserId, region, asn, tag, carrier, ip, bytesIn, bytesOut, requests, errors] = row;
      return { minute, product, subuserId, region, asn, tag, carrier, ip, bytesIn, bytesOut, requests, errors };
    });
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
    // First delivery: the account's store applies the message, then the worker crashes before the pools.
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
    // Redelivered: the store skips what it applied, the pools apply once; a third delivery changes nothing.
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await balance()).gb_used).toBe(1.0000005);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 5 });
    const store = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));
    await runDurableObjectAlarm(store);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 5 });
  });
});
