import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { DAY, HOUR, iso, MINUTE, range, rowsAsMap, sumBy } from "../helpers/traffic-sums";
import { eventually, type RecordFields, reportUsage, traffic, usageRecord } from "../helpers/usage";

/**
 * `group_by=status` and `group_by=error_code` (from the same folded rows as every grouping), `order_by` and `limit`
 * (a top table in one call), and sub-users' labels in `group_by=subuser` rows.
 */

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const storeOf = (account: TestAccount) => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));

/** Fake time on an hour boundary ahead of the real clock (the store's alarms run on the real one). */
function fakeTimeAhead(): number {
  vi.useFakeTimers({ toFake: ["Date"] });
  const t0 = Date.now() + HOUR - (Date.now() % HOUR) + 7 * MINUTE;
  vi.setSystemTime(t0);
  return t0;
}

/** Two sub-users' requests over three hours: statuses 200, 204, 404, 502 and 503, some with gateway error codes. */
async function seedOutcomes(t0: number) {
  const account = await createAccount({ bandwidthGb: 10 });
  const alice = await createSubuser(account);
  const bob = await createSubuser(account);
  const shapes: Array<[typeof alice, number, string, string | null, number, string | null]> = [
    [alice, 170, "us/ca/la", "checkout", 200, null],
    [alice, 95, "de/be/berlin", "checkout", 502, "upstream-timeout"],
    [alice, 50, "us/ny/nyc", null, 404, null],
    [bob, 120, "de/be/berlin", "search", 200, null],
    [bob, 20, "us/ca/la", "search", 503, "rps-limit"],
    [bob, 5, "fr/idf/paris", null, 204, null],
    [bob, 65, "de/be/berlin", "search", 502, "upstream-timeout"],
  ];
  const owners = new Map<string, string>();
  const records = shapes.flatMap(([owner, ago, geo, tag, status, error], index) =>
    Array.from({ length: index + 1 }, (_, n) => {
      const record = usageRecord(username(owner.name), {
        ts: iso(t0 - ago * MINUTE + n * 1000),
        exit_geo: geo,
        tag,
        status,
        error_code: error,
        bytes_in: error ? 0 : 1000 * (index + 1) + n,
        bytes_out: 10 * (index + 1) + n,
      });
      owners.set(record.request_id as string, owner.id);
      return record;
    }),
  );
  expect((await reportUsage(records)).status).toBe(202);
  const query = range(t0 - 4 * HOUR, t0 + HOUR);
  await eventually(
    () => traffic(account, "residential", query),
    (body) => body.rows[0].requests === records.length,
  );
  return { account, alice, bob, records, owners, query };
}

const byStatus = (r: RecordFields) => r.status;
const byCode = (r: RecordFields) => (r.error_code === null ? undefined : r.error_code);
const region = (r: RecordFields) => (r.exit_geo as string).split("/")[0];

describe("GET /{product}/traffic?group_by=status|error_code", () => {
  it("sums exactly per status (every request) and per error code (failed requests), filtered as any grouping, at every tier and over long ranges", async () => {
    const t0 = fakeTimeAhead();
    const { account, alice, records, owners, query } = await seedOutcomes(t0);
    const wide = range(t0 - 40 * DAY, t0 + HOUR);
    const check = async (label: string) => {
      for (const q of [query, wide]) {
        const statuses = await traffic(account, "residential", `${q}&group_by=status`);
        expect(rowsAsMap(statuses.rows, "status"), `${label} status`).toEqual(sumBy(records, byStatus));
        expect(statuses.rows.map((row: Record<string, any>) => row.status)).toEqual([200, 204, 404, 502, 503]);
        const codes = await traffic(account, "residential", `${q}&group_by=error_code`);
        expect(rowsAsMap(codes.rows, "error_code"), `${label} error_code`).toEqual(sumBy(records, byCode));
        for (const row of codes.rows) expect(row.errors).toBe(row.requests);
      }
      const aliceOnly = records.filter((r) => owners.get(r.request_id as string) === alice.id);
      const mine = await traffic(account, "residential", `${query}&subuser=${alice.id}&group_by=status`);
      expect(rowsAsMap(mine.rows, "status"), `${label} subuser`).toEqual(sumBy(aliceOnly, byStatus));
      const german = await traffic(account, "residential", `${wide}&region=DE&group_by=error_code`);
      expect(rowsAsMap(german.rows, "error_code"), `${label} region`).toEqual(
        sumBy(
          records.filter((r) => region(r) === "de"),
          byCode,
        ),
      );
      const search = await traffic(account, "residential", `${query}&tag=search&group_by=status`);
      expect(rowsAsMap(search.rows, "status"), `${label} tag`).toEqual(
        sumBy(
          records.filter((r) => r.tag === "search"),
          byStatus,
        ),
      );
    };
    await check("minutes");
    for (const [later, label] of [
      [2 * HOUR, "5-minute buckets and hours"],
      [2 * DAY, "days"],
      [20 * DAY, "hour resolution"],
    ] as const) {
      vi.setSystemTime(t0 + later);
      await runDurableObjectAlarm(storeOf(account));
      await check(label);
    }
  });

  it("confines a key bound to sub-users to their figures", async () => {
    const t0 = fakeTimeAhead();
    const { account, bob, records, owners, query } = await seedOutcomes(t0);
    const made = await call("POST", "/v1/api-keys", {
      token: account.token,
      body: { name: "bob-only", subuser_ids: [bob.id] },
    });
    expect(made.status).toBe(201);
    const bound = { ...account, token: (await json(made)).token as string };
    const bobs = records.filter((r) => owners.get(r.request_id as string) === bob.id);
    for (const q of [query, range(t0 - 40 * DAY, t0 + HOUR)]) {
      const statuses = await traffic(bound, "residential", `${q}&group_by=status`);
      expect(rowsAsMap(statuses.rows, "status")).toEqual(sumBy(bobs, byStatus));
      const codes = await traffic(bound, "residential", `${q}&group_by=error_code`);
      expect(rowsAsMap(codes.rows, "error_code")).toEqual(sumBy(bobs, byCode));
    }
  });
});

describe("GET /{product}/traffic: order_by, limit and labels", () => {
  it("answers a top table in one call: heaviest first, ties in key order, the first `limit`, each sub-user with its label when asked (a deleted one's too)", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subusers = await Promise.all([1, 2, 3, 4].map(() => createSubuser(account)));
    // Requests 3, 5, 5, 1; bytes the other way round for the two with 5.
    const counts = [3, 5, 5, 1];
    const records = subusers.flatMap((subuser, i) =>
      Array.from({ length: counts[i] as number }, () =>
        usageRecord(username(subuser.name), { bytes_in: 100 * (i + 1), bytes_out: 0, status: 200, error_code: null }),
      ),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const query = range(Date.now() - HOUR, Date.now() + MINUTE);
    await eventually(
      () => traffic(account, "residential", query),
      (body) => body.rows[0].requests === records.length,
    );
    const [one, two, three, four] = subusers as [
      (typeof subusers)[0],
      (typeof subusers)[0],
      (typeof subusers)[0],
      (typeof subusers)[0],
    ];
    const tied = [two, three].sort((a, b) => (a.id < b.id ? -1 : 1));
    const top = await traffic(
      account,
      "residential",
      `${query}&group_by=subuser&order_by=requests&limit=3&labels=true`,
    );
    expect(top.rows.map((row: Record<string, any>) => [row.subuser, row.label, row.requests])).toEqual([
      [tied[0]?.id, tied[0]?.label, 5],
      [tied[1]?.id, tied[1]?.label, 5],
      [one.id, one.label, 3],
    ]);
    const byBytes = await traffic(account, "residential", `${query}&group_by=subuser&order_by=bytes`);
    expect(byBytes.rows.map((row: Record<string, any>) => row.subuser)).toEqual([three.id, two.id, four.id, one.id]);
    const keyOrder = await traffic(account, "residential", `${query}&group_by=subuser&limit=2`);
    expect(keyOrder.rows.map((row: Record<string, any>) => row.subuser)).toEqual(
      subusers
        .map((s) => s.id)
        .sort()
        .slice(0, 2),
    );
    expect((await call("DELETE", `/v1/subusers/${four.id}`, { token: account.token })).status).toBe(200);
    const afterDeletion = await traffic(
      account,
      "residential",
      `${query}&group_by=subuser&order_by=requests&labels=true`,
    );
    expect(afterDeletion.rows.at(-1)).toMatchObject({ subuser: four.id, label: four.label, requests: 1 });
    const statuses = await traffic(account, "residential", `${query}&group_by=status&order_by=requests&limit=1`);
    expect(statuses.rows).toEqual([expect.objectContaining({ status: 200, requests: records.length })]);
    expect(statuses.rows[0]).not.toHaveProperty("label");
    // Labels are asked for: without `labels=true` a sub-user's row carries its id alone.
    expect(keyOrder.rows[0]).not.toHaveProperty("label");
  });

  it("refuses a bad order_by or limit, and either without group_by: 422 before any read", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const query = range(Date.now() - HOUR, Date.now());
    for (const extra of [
      "group_by=subuser&order_by=name",
      "group_by=subuser&limit=0",
      "group_by=subuser&limit=1001",
      "group_by=subuser&limit=ten",
      "group_by=subuser&labels=yes",
      "order_by=requests",
      "limit=5",
      "group_by=outcome",
    ]) {
      const response = await call("GET", `/v1/residential/traffic?${query}&${extra}`, { token: account.token });
      expect(response.status, extra).toBe(422);
      const body = await json(response);
      expect(["invalid_request", "invalid_group_by"], extra).toContain(body.code);
    }
  });
});
