import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { targetDomain } from "../../src/domain/traffic/target-domain";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, type RecordFields, reportUsage, traffic, usageRecord } from "../helpers/usage";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

afterEach(() => vi.restoreAllMocks());

const iso = (ms: number) => new Date(ms).toISOString();
const recentRange = () => `from=${iso(Date.now() - HOUR)}&to=${iso(Date.now() + MINUTE)}`;
const storeOf = (account: TestAccount) => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));

type Sums = { bytes_in: number; bytes_out: number; requests: number; errors: number };
const metrics = (row: Record<string, any>): Sums => ({
  bytes_in: row.bytes_in,
  bytes_out: row.bytes_out,
  requests: row.requests,
  errors: row.errors,
});

function sumsOf(records: RecordFields[], key: (record: RecordFields) => string): Map<string, Sums> {
  const sums = new Map<string, Sums>();
  for (const record of records) {
    const s = sums.get(key(record)) ?? { bytes_in: 0, bytes_out: 0, requests: 0, errors: 0 };
    s.bytes_in += record.bytes_in as number;
    s.bytes_out += record.bytes_out as number;
    s.requests += 1;
    if (record.error_code !== null) s.errors += 1;
    sums.set(key(record), s);
  }
  return sums;
}

function total(rows: Array<Record<string, any>>): Sums {
  return rows.reduce<Sums>(
    (sum, row) => ({
      bytes_in: sum.bytes_in + row.bytes_in,
      bytes_out: sum.bytes_out + row.bytes_out,
      requests: sum.requests + row.requests,
      errors: sum.errors + row.errors,
    }),
    { bytes_in: 0, bytes_out: 0, requests: 0, errors: 0 },
  );
}

/** Waits until the account's ungrouped total counts `requests`, and returns it. */
async function settledTotal(account: TestAccount, query: string, requests: number) {
  const body = await eventually(
    () => traffic(account, "residential", query),
    (b) => b.rows[0].requests === requests,
  );
  return metrics(body.rows[0]);
}

const HOSTS: Array<[string, string]> = [
  ["a.b.example.co.uk", "example.co.uk"],
  ["www.example.co.uk:443", "example.co.uk"],
  ["Shop.Example.COM", "example.com"],
  ["api.example.com:8443", "example.com"],
  ["198.51.100.7", "(ip)"],
  ["[2001:db8::1]:443", "(ip)"],
  ["2001:db8::2", "(ip)"],
  ["[::ffff:198.51.100.7]:443", "(ip)"],
  ["::ffff:198.51.100.8", "(ip)"],
  ["1.2.3", "(ip)"],
  ["EXAMPLE.COM.", "example.com"],
  ["localhost", "(none)"],
  ["s3.amazonaws.com", "amazonaws.com"],
];

describe("target domains (eTLD+1)", () => {
  it("folds a host to its registrable domain; IP addresses are (ip), hosts without one (none)", () => {
    for (const [host, domain] of HOSTS) expect(targetDomain(host), host).toBe(domain);
  });
});

describe("GET /{product}/traffic?group_by=domain", () => {
  it("sums each registrable domain exactly, and the rows sum to the ungrouped total (before and after a fold)", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const alice = await createSubuser(account);
    const bob = await createSubuser(account);
    const records = HOSTS.flatMap(([host], i) =>
      [alice, bob].map((owner, j) =>
        usageRecord(username(owner.name), {
          target_host: host,
          bytes_in: 1000 * (i + 1) + j,
          bytes_out: 10 * (i + 1),
          error_code: i % 3 === 0 ? "upstream-timeout" : null,
          status: i % 3 === 0 ? 502 : 200,
        }),
      ),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const query = recentRange();
    const all = await settledTotal(account, query, records.length);
    const expected = sumsOf(records, (r) => targetDomain(r.target_host as string));
    expect(expected.get("example.co.uk")?.requests).toBe(4);
    const check = async () => {
      const body = await traffic(account, "residential", `${query}&group_by=domain`);
      expect(new Map<string, Sums>(body.rows.map((row: Record<string, any>) => [row.domain, metrics(row)]))).toEqual(
        expected,
      );
      expect(total(body.rows)).toEqual(all);
      for (const row of body.rows) expect(row.error_rate).toBe(row.requests ? row.errors / row.requests : 0);
      // Heaviest first.
      const weights = body.rows.map((row: Sums) => row.bytes_in + row.bytes_out);
      expect(weights).toEqual([...weights].sort((a, b) => b - a));
    };
    await check();
    await runDurableObjectAlarm(storeOf(account));
    await check();
  });

  it("keeps at most 100 domains per bucket and adds the rest to (other): the sums stay exact", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const minute = Date.now() - (Date.now() % MINUTE);
    // 130 domains in one minute, of distinct weights: the heaviest 100 of one delivery are kept by name.
    const records = Array.from({ length: 130 }, (_, i) =>
      usageRecord(username(subuser.name), {
        ts: iso(minute + (i % 50)),
        target_host: `www.site${i}.com`,
        bytes_in: 10_000 + i * 100,
      }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    // A later delivery into the same minute: a known domain adds to its row, a new one goes to (other).
    const later = [
      usageRecord(username(subuser.name), { ts: iso(minute + 100), target_host: "site129.com", bytes_in: 7 }),
      usageRecord(username(subuser.name), { ts: iso(minute + 101), target_host: "brand-new.net", bytes_in: 5 }),
    ];
    expect((await reportUsage(later)).status).toBe(202);
    const query = recentRange();
    const all = await settledTotal(account, query, records.length + later.length);
    const body = await traffic(account, "residential", `${query}&group_by=domain`);
    expect(body.rows).toHaveLength(101);
    expect(total(body.rows)).toEqual(all);
    const byDomain = new Map<string, Sums>(body.rows.map((row: Record<string, any>) => [row.domain, metrics(row)]));
    const kept = records.slice(30).map((r) => targetDomain(r.target_host as string));
    for (const domain of kept) expect(byDomain.has(domain), domain).toBe(true);
    expect(byDomain.get("site129.com")?.requests).toBe(2);
    expect(byDomain.has("brand-new.net")).toBe(false);
    const folded = [...records.slice(0, 30), later[1] as RecordFields];
    expect(body.rows.at(-1).domain).toBe("(other)");
    expect(byDomain.get("(other)")).toEqual(sumsOf(folded, () => "(other)").get("(other)"));
  });

  it("counts usage delivered twice once (the same batch posted again, and the queue's redelivery)", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const { deliver } = holdUsageMessages();
    const batchId = crypto.randomUUID();
    const records = ["a.example.com", "b.example.com", "example.org"].map((host) =>
      usageRecord(username(subuser.name), { target_host: host }),
    );
    expect((await reportUsage(records, batchId)).status).toBe(202);
    expect((await reportUsage(records, batchId)).status).toBe(202);
    await deliver();
    await deliver();
    const query = recentRange();
    const all = await settledTotal(account, query, 3);
    const body = await traffic(account, "residential", `${query}&group_by=domain`);
    expect(body.rows.map((row: Record<string, any>) => [row.domain, row.requests])).toEqual([
      ["example.com", 2],
      ["example.org", 1],
    ]);
    expect(total(body.rows)).toEqual(all);
  });

  it("shows an account its own domains only", async () => {
    const mine = await createAccount({ bandwidthGb: 10 });
    const theirs = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(theirs);
    expect((await reportUsage([usageRecord(username(subuser.name), { target_host: "secret.example" })])).status).toBe(
      202,
    );
    const query = recentRange();
    await settledTotal(theirs, query, 1);
    expect((await traffic(mine, "residential", `${query}&group_by=domain`)).rows).toEqual([]);
    expect((await traffic(theirs, "residential", `${query}&group_by=domain`)).rows).toHaveLength(1);
  });

  it("refuses group_by=domain with a subuser, region or tag filter (422 invalid_group_by)", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    for (const filter of ["region=US", "tag=checkout"]) {
      const response = await call("GET", `/v1/residential/traffic?${recentRange()}&group_by=domain&${filter}`, {
        token: account.token,
      });
      expect(response.status, filter).toBe(422);
      expect((await json(response)).code).toBe("invalid_group_by");
    }
  });
});
