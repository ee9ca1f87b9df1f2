import { runDurableObjectAlarm } from "cloudflare:test";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { orderBatch, type TestBatch } from "../helpers/isp";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, traffic, usageRecord } from "../helpers/usage";
import { createReport, day, downloadText, fetchLink, parseCsv, runToEnd } from "./helpers";

const DAY_MS = 86_400_000;

/**
 * One account with data of every kind: two residential sub-users and a mobile one with traffic today, an ISP batch
 * with traffic on two of its IPs, ledger lines (the opening credit, bandwidth orders, the ISP order).
 */
let account: TestAccount;
let alice: TestSubuser;
let bob: TestSubuser;
let phone: TestSubuser;
let batch: TestBatch;
let batchIpList: string[];
const records: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  account = await createAccount({ plan: "pro", bandwidthGb: 10, balance_usd: 1000 });
  alice = await createSubuser(account, { label: "alice" });
  bob = await createSubuser(account, { label: "bob" });
  phone = await createSubuser(account, { label: "phone", products: ["mobile"] });
  batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * 60_000);
  const ips = await json<Array<{ ip: string }>>(
    await call("GET", `/v1/isp/batches/${batch.batchId}/ips?format=json`, { token: account.token }),
  );
  batchIpList = ips.map((ip) => ip.ip).sort();
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  records.push(
    usageRecord(username(alice.name), { ts: at(5), bytes_in: 1000, bytes_out: 10, tag: "tag_a" }),
    usageRecord(username(alice.name), {
      ts: at(4),
      bytes_in: 2000,
      bytes_out: 20,
      status: 502,
      error_code: "upstream",
    }),
    usageRecord(username(bob.name), { ts: at(3), bytes_in: 300, bytes_out: 30, target_host: 'comma,"quote".example' }),
    usageRecord(username(phone.name, "type-mob-region-us"), {
      ts: at(2),
      product: "mobile",
      bytes_in: 40,
      bytes_out: 4,
    }),
    usageRecord(`${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`, {
      ts: at(2),
      product: "isp",
      dest_ip: batchIpList[0],
      bytes_in: 500,
      status: 500,
      error_code: "upstream",
    }),
    usageRecord(`${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`, {
      ts: at(1),
      product: "isp",
      dest_ip: batchIpList[0],
    }),
    usageRecord(`${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`, {
      ts: at(1),
      product: "isp",
      dest_ip: batchIpList[1],
    }),
  );
  expect((await reportUsage(records)).status).toBe(202);
  const range = `from=${new Date(now - DAY_MS).toISOString()}&to=${new Date(now + 60_000).toISOString()}`;
  await eventually(
    () => traffic(account, "isp", `${range}&group_by=ip`),
    (body) => body.rows.length === 2,
  );
}, 60_000);

const today = () => day(Date.now());

async function fileOf(report: Record<string, any>) {
  const run = await runToEnd(account, report.id, today(), today());
  expect(run.status, run.error).toBe("completed");
  expect(run.download_url).toMatch(/^https:\/\/api\.test\/v1\/reports\/runs\/run_/);
  return { run, text: await downloadText(run.download_url) };
}

/** The file's rows as objects of strings, whatever the text format. */
function rowsOf(format: string, text: string): Array<Record<string, string | number | null>> {
  if (format === "json")
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  const table =
    format === "csv"
      ? parseCsv(text)
      : text
          .trimEnd()
          .split("\n")
          .map((line) => line.split("\t"));
  const [header, ...rows] = table;
  return rows.map((row) => Object.fromEntries((header ?? []).map((name, i) => [name, row[i] ?? ""])));
}

const formats = ["csv", "tsv", "json"] as const;

describe("report files: each type in each text format, read back through the download link", () => {
  it.each(formats)("traffic (%s): bytes per sub-user, product and day, filters applied", async (format) => {
    const report = await createReport(account, { type: "traffic", format });
    const { run, text } = await fileOf(report);
    const rows = rowsOf(format, text);
    const expected = [
      [alice.id, "residential", 3000, 30, 2, 1],
      [bob.id, "residential", 300, 30, 1, 0],
      [phone.id, "mobile", 40, 4, 1, 0],
      [batch.subuser.id, "isp", 2500, 300, 3, 1],
    ];
    for (const [subuser, product, bytesIn, bytesOut, requests, errors] of expected) {
      const row = rows.find((r) => r.subuser_id === subuser && r.product === product);
      expect(row, `${subuser} ${product}`).toBeDefined();
      expect(Number(row?.bytes_in)).toBe(bytesIn);
      expect(Number(row?.bytes_out)).toBe(bytesOut);
      expect(Number(row?.requests)).toBe(requests);
      expect(Number(row?.errors)).toBe(errors);
      expect(row?.day).toBe(today());
    }
    expect(rows).toHaveLength(4);
    expect(run.rows).toBe(4);
    expect(run.bytes).toBe(new TextEncoder().encode(text).length);
    const filtered = await createReport(account, {
      type: "traffic",
      format,
      filters: { products: ["residential"], subusers: [alice.id] },
    });
    const only = rowsOf(format, (await fileOf(filtered)).text);
    expect(only.map((r) => [r.subuser_id, r.product])).toEqual([[alice.id, "residential"]]);
  });

  it.each(formats)("requests (%s): the sampled log of the period, oldest first, values escaped", async (format) => {
    const report = await createReport(account, { type: "requests", format, filters: { products: ["residential"] } });
    const rows = rowsOf(format, (await fileOf(report)).text);
    const expected = records.filter((r) => r.product === "residential");
    expect(rows.map((r) => r.request_id)).toEqual(expected.map((r) => r.request_id));
    // A comma and quotes inside a value survive every format (CSV quotes the field, doubling its quotes).
    expect(rows.find((r) => r.subuser_id === bob.id)?.target_host).toBe('comma,"quote".example');
    expect(rows[0]?.tag).toBe("tag_a");
    expect(Number(rows[1]?.status)).toBe(502);
  });

  it.each(formats)("invoices (%s): ledger lines with their references and products", async (format) => {
    const report = await createReport(account, { type: "invoices", format });
    const rows = rowsOf(format, (await fileOf(report)).text);
    const ledger = await env.DB.prepare("SELECT * FROM ledger_entries WHERE account_id = ? ORDER BY id")
      .bind(account.id)
      .all<Record<string, any>>();
    expect(rows.map((r) => r.id)).toEqual(ledger.results.map((l) => l.id));
    const isp = rows.find((r) => r.reference === batch.orderId);
    expect(isp).toMatchObject({ reference_type: "order", product: "isp" });
    expect(Number(isp?.amount)).toBeLessThan(0);
    const ispOnly = rowsOf(
      format,
      (await fileOf(await createReport(account, { type: "invoices", format, filters: { products: ["isp"] } }))).text,
    );
    expect(ispOnly.map((r) => r.product)).toEqual(["isp"]);
  });

  it.each(formats)("subusers (%s): the inventory snapshot, filtered by product", async (format) => {
    const report = await createReport(account, { type: "subusers", format });
    const rows = rowsOf(format, (await fileOf(report)).text);
    expect(rows.map((r) => r.id).sort()).toEqual([alice.id, bob.id, phone.id, batch.subuser.id].sort());
    expect(rows.find((r) => r.id === bob.id)).toMatchObject({
      label: "bob",
      products: "residential",
      status: "active",
    });
    const mobile = rowsOf(
      format,
      (await fileOf(await createReport(account, { type: "subusers", format, filters: { products: ["mobile"] } }))).text,
    );
    expect(mobile.map((r) => r.id)).toEqual([phone.id]);
  });

  it.each(formats)(
    "isp_batches (%s): every IP of the batch with requests, error rate and last seen",
    async (format) => {
      const report = await createReport(account, { type: "isp_batches", format });
      const rows = rowsOf(format, (await fileOf(report)).text);
      expect(rows.map((r) => r.ip)).toEqual(batchIpList);
      const first = rows[0];
      expect(Number(first?.requests)).toBe(2);
      expect(Number(first?.errors)).toBe(1);
      expect(Number(first?.error_rate)).toBe(0.5);
      expect(first?.last_seen_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(Number(rows[2]?.requests)).toBe(0);
      expect(rows[2]?.last_seen_at === "" || rows[2]?.last_seen_at === null).toBe(true);
      const none = await createReport(account, { type: "isp_batches", format, filters: { products: ["mobile"] } });
      expect(rowsOf(format, (await fileOf(none)).text)).toEqual([]);
    },
  );

  it("writes CSV per RFC 4180: header row, CRLF line ends, quotes doubled", async () => {
    const report = await createReport(account, { type: "requests", format: "csv" });
    const { text } = await fileOf(report);
    expect(text.startsWith("request_id,ts,product,subuser_id,method,target_host,status,bytes,")).toBe(true);
    expect(text).toContain(',"comma,""quote"".example",');
    expect(text.endsWith("\r\n")).toBe(true);
  });

  it("serves the file with its content type, as an attachment, never cached", async () => {
    const report = await createReport(account, { type: "subusers", format: "json" });
    const run = await runToEnd(account, report.id);
    const response = await fetchLink(run.download_url);
    expect(response.headers.get("Content-Type")).toBe("application/x-ndjson; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toBe(`attachment; filename="${run.run_id}.ndjson"`);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(Number(response.headers.get("Content-Length"))).toBe(run.bytes);
    await response.arrayBuffer();
  });
});

describe("parquet files (typed columns), read back with hyparquet", () => {
  const s3 = { type: "s3", bucket: "acme-exports", prefix: "parquet/", role_arn: "arn:aws:iam::123456789012:role/r" };

  async function parquetOf(type: string) {
    const report = await createReport(account, { type, format: "parquet", destination: s3 });
    const run = await runToEnd(account, report.id);
    expect(run.status, run.error).toBe("completed");
    const file = await (await fetchLink(run.download_url)).arrayBuffer();
    expect(file.byteLength).toBe(run.bytes);
    const metadata = parquetMetadata(file);
    expect(Number(metadata.num_rows)).toBe(run.rows);
    return { rows: await parquetReadObjects({ file }), metadata };
  }

  it("traffic: day is a DATE, byte counts INT64, error_rate DOUBLE", async () => {
    const { rows, metadata } = await parquetOf("traffic");
    const types = Object.fromEntries(metadata.schema.slice(1).map((e) => [e.name, e.type]));
    expect(types).toMatchObject({ day: "INT32", bytes_in: "INT64", error_rate: "DOUBLE", product: "BYTE_ARRAY" });
    const aliceRow = rows.find((r) => r.subuser_id === alice.id);
    expect(aliceRow).toMatchObject({
      product: "residential",
      bytes_in: 3000n,
      requests: 2n,
      errors: 1n,
      error_rate: 0.5,
    });
    expect(aliceRow?.day).toBeInstanceOf(Date);
    expect((aliceRow?.day as Date | undefined)?.toISOString().slice(0, 10)).toBe(today());
  });

  it("requests, invoices, subusers and isp_batches: rows and timestamps as typed values", async () => {
    const requests = await parquetOf("requests");
    expect(requests.rows.map((r) => r.request_id)).toEqual(records.map((r) => r.request_id));
    expect(requests.rows[0]?.ts).toBeInstanceOf(Date);
    const invoices = await parquetOf("invoices");
    expect(typeof invoices.rows[0]?.amount).toBe("number");
    const subusers = await parquetOf("subusers");
    expect(subusers.rows.find((r) => r.id === bob.id)).toMatchObject({ label: "bob", concurrent_max: 600n });
    const isp = await parquetOf("isp_batches");
    expect(isp.rows.map((r) => r.ip)).toEqual(batchIpList);
    expect(isp.rows[0]?.last_seen_at).toBeInstanceOf(Date);
    expect(isp.rows[2]?.last_seen_at).toBeNull();
  });
});

describe("traffic reports over older days read the folded tiers exactly", () => {
  it("gives one row per UTC day and sub-user, the same before and after the store folds its rollups", async () => {
    const owner = await createAccount({ plan: "pro", bandwidthGb: 10 });
    const carol = await createSubuser(owner, { label: "carol" });
    const now = Date.now();
    const today0 = now - (now % DAY_MS);
    const days = [3, 2, 20].map((back) => today0 - back * DAY_MS + 3_600_000);
    const history = days.flatMap((ts, i) =>
      Array.from({ length: i + 1 }, (_, k) =>
        usageRecord(username(carol.name), { ts: new Date(ts + k * 60_000).toISOString(), bytes_in: 100 * (i + 1) }),
      ),
    );
    expect((await reportUsage(history)).status).toBe(202);
    const range = `from=${new Date(today0 - 30 * DAY_MS).toISOString()}&to=${new Date(now).toISOString()}`;
    await eventually(
      () => traffic(owner, "residential", range),
      (body) => body.rows[0]?.requests === history.length,
    );
    const expected = [
      [day(days[2] as number), 3, 900],
      [day(days[0] as number), 1, 100],
      [day(days[1] as number), 2, 400],
    ];
    const report = await createReport(owner, { type: "traffic", format: "json" });
    const rowsFor = async (fromDaysBack: number) => {
      const run = await runToEnd(owner, report.id, day(today0 - fromDaysBack * DAY_MS), day(today0));
      expect(run.status, run.error).toBe("completed");
      return rowsOf("json", await downloadText(run.download_url)).map((r) => [r.day, r.requests, r.bytes_in]);
    };
    expect(await rowsFor(30)).toEqual(expected);
    expect(await rowsFor(4)).toEqual(expected.slice(1));
    const store = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(owner.id));
    await runDurableObjectAlarm(store);
    expect(await rowsFor(30)).toEqual(expected);
    expect(await rowsFor(4)).toEqual(expected.slice(1));
  });
});
