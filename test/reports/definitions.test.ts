import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createReport, EMAIL_DESTINATION, receiverUrl, SIGNING_SECRET, webhookDestination } from "./helpers";

afterEach(() => vi.useRealTimers());

describe("report definitions (spec §2.11, §4.9)", () => {
  it("creates, reads, lists, updates and deletes a report; ids are rep_; next_run_at follows the schedule", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-23T10:15:00Z"));
    const account = await createAccount({ plan: "pro" });
    const created = await createReport(account, {
      name: "Weekly traffic",
      type: "traffic",
      filters: { products: ["residential"] },
      schedule: "0  6 * * 1",
      format: "tsv",
    });
    expect(created).toMatchObject({
      name: "Weekly traffic",
      type: "traffic",
      filters: { products: ["residential"] },
      schedule: "0 6 * * 1",
      next_run_at: "2026-11-30T06:00:00.000Z",
      format: "tsv",
      destination: EMAIL_DESTINATION,
    });
    expect(created.id).toMatch(/^rep_[0-9A-HJKMNP-TV-Z]{26}$/);
    const got = await json(await call("GET", `/v1/reports/${created.id}`, { token: account.token }));
    expect(got).toEqual(created);

    const patched = await call("PATCH", `/v1/reports/${created.id}`, {
      token: account.token,
      body: { name: "On demand", schedule: null, format: "json" },
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ name: "On demand", schedule: null, next_run_at: null, format: "json" });

    const listed = await json(await call("GET", "/v1/reports", { token: account.token }));
    expect(listed.data.map((r: { id: string }) => r.id)).toEqual([created.id]);
    expect(listed.data[0].recent_runs).toEqual([]);

    const deleted = await call("DELETE", `/v1/reports/${created.id}`, { token: account.token });
    expect(await json(deleted)).toMatchObject({ id: created.id, deleted: true });
    expect((await call("GET", `/v1/reports/${created.id}`, { token: account.token })).status).toBe(404);
    expect((await json(await call("GET", "/v1/reports", { token: account.token }))).data).toEqual([]);
  });

  it("pages the list with a cursor, newest first", async () => {
    const account = await createAccount();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createReport(account, { name: `r${i}` })).id);
    const first = await call("GET", "/v1/reports?limit=2", { token: account.token });
    const page = await json(first);
    expect(page.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.headers.get("Link")).toContain("cursor=");
    const next = await json(
      await call("GET", `/v1/reports?limit=2&cursor=${page.next_cursor}`, { token: account.token }),
    );
    expect(next.data.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(next.next_cursor).toBeNull();
  });

  it.each(["trial", "pay-as-you-go", "starter"])(
    "answers 403 feature_not_in_plan on every report route below Pro (%s): the reports verbs check the plan first",
    async (plan) => {
      const account = await createAccount({ plan });
      const id = "rep_01JD2W6Q6J5E4V3N0Z9Y8X7W6V";
      const requests: Array<[string, string, unknown?]> = [
        ["GET", "/v1/reports"],
        ["POST", "/v1/reports", { name: "Daily", type: "subusers", format: "csv", destination: EMAIL_DESTINATION }],
        ["GET", `/v1/reports/${id}`],
        ["PATCH", `/v1/reports/${id}`, { name: "x" }],
        ["DELETE", `/v1/reports/${id}`],
        ["POST", `/v1/reports/${id}/run`, { from: "2026-11-01", to: "2026-11-01" }],
        ["GET", "/v1/reports/runs/run_01JD2W6Q6J5E4V3N0Z9Y8X7W6V"],
      ];
      for (const [method, path, body] of requests) {
        const response = await call(method, path, { token: account.token, body });
        expect(response.status, `${method} ${path}`).toBe(403);
        expect((await json(response)).code).toBe("feature_not_in_plan");
      }
    },
  );

  it.each(["business", "enterprise"])("allows reports on %s", async (plan) => {
    const account = await createAccount({ plan });
    expect((await createReport(account)).id).toMatch(/^rep_/);
  });

  it.each([
    "@daily",
    "@hourly",
    "0 0 L * *",
    "0 0 15W * *",
    "0 0 * * 1#2",
    "0 0 * * 5L",
    "0 0 ? * *",
    "0 0 * * * *",
    "0 0 * *",
    "61 * * * *",
    "0 24 * * *",
    "*/0 * * * *",
    "0 0 31 2 *",
    "5/15 * * * *",
    "MON * * * *",
    "",
  ])("refuses the schedule %j with 422 invalid_cron", async (schedule) => {
    const account = await createAccount();
    const response = await call("POST", "/v1/reports", {
      token: account.token,
      body: { name: "x", type: "subusers", format: "csv", destination: EMAIL_DESTINATION, schedule },
    });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("invalid_cron");
  });

  it.each(["*/15 * * * *", "0 9 * * 1-5", "0 0 1,15 * *", "30 6 * JAN-MAR sun", "0 0 29 2 *", "0 0 * * 7"])(
    "accepts the standard schedule %j",
    async (schedule) => {
      const account = await createAccount();
      const report = await createReport(account, { schedule });
      expect(report.next_run_at).not.toBeNull();
    },
  );

  it("refuses an invalid schedule on PATCH too, leaving the report unchanged", async () => {
    const account = await createAccount();
    const report = await createReport(account, { schedule: "0 6 * * *" });
    const response = await call("PATCH", `/v1/reports/${report.id}`, {
      token: account.token,
      body: { schedule: "@weekly" },
    });
    expect((await json(response)).code).toBe("invalid_cron");
    const got = await json(await call("GET", `/v1/reports/${report.id}`, { token: account.token }));
    expect(got.schedule).toBe("0 6 * * *");
  });

  it("allows parquet only for s3 and gcs destinations: 422 naming format otherwise, on create and on PATCH", async () => {
    const account = await createAccount();
    for (const destination of [EMAIL_DESTINATION, webhookDestination()]) {
      const response = await call("POST", "/v1/reports", {
        token: account.token,
        body: { name: "x", type: "traffic", format: "parquet", destination },
      });
      expect(response.status).toBe(422);
      const error = await json(response);
      expect(error.code).toBe("invalid_request");
      expect(error.details.map((d: { field: string }) => d.field)).toEqual(["format"]);
    }
    const report = await createReport(account);
    const patched = await call("PATCH", `/v1/reports/${report.id}`, {
      token: account.token,
      body: { format: "parquet" },
    });
    expect((await json(patched)).details[0].field).toBe("format");
    const s3 = await createReport(account, {
      format: "parquet",
      destination: { type: "s3", bucket: "acme-exports", prefix: "p/", role_arn: "arn:aws:iam::123456789012:role/r" },
    });
    expect(s3.destination).toEqual({
      type: "s3",
      bucket: "acme-exports",
      prefix: "p/",
      role_arn: "arn:aws:iam::123456789012:role/r",
      region: "us-east-1",
    });
    const gcs = await createReport(account, {
      format: "parquet",
      destination: { type: "gcs", bucket: "acme-exports", service_account_email: "r@acme.iam.gserviceaccount.com" },
    });
    expect(gcs.destination).toMatchObject({ type: "gcs", prefix: "" });
  });

  it.each([
    [{ type: "sales" }, "type"],
    [{ format: "xlsx" }, "format"],
    [{ name: "" }, "name"],
    [{ filters: { products: ["datacenter"] } }, "filters.products.0"],
    [{ filters: { subusers: ["not-an-id"] } }, "filters.subusers.0"],
    [{ filters: { region: "us" } }, "filters.region"],
    [{ destination: { type: "ftp", host: "x" } }, "destination.type"],
    [{ destination: { type: "email", email: "nope" } }, "destination.email"],
    [{ destination: { type: "webhook", url: "https://x.receiver.test/" } }, "destination.signing_secret"],
    [
      { destination: { type: "webhook", url: "https://x.receiver.test/", signing_secret: "plain" } },
      "destination.signing_secret",
    ],
    [{ destination: { type: "s3", bucket: "B!", role_arn: "arn:aws:iam::123456789012:role/r" } }, "destination.bucket"],
    [{ destination: { type: "s3", bucket: "bucket", role_arn: "role" } }, "destination.role_arn"],
  ])("rejects %j with 422 invalid_request naming %s", async (override, field) => {
    const account = await createAccount();
    const response = await call("POST", "/v1/reports", {
      token: account.token,
      body: { name: "x", type: "subusers", format: "csv", destination: EMAIL_DESTINATION, ...override },
    });
    expect(response.status).toBe(422);
    const error = await json(response);
    expect(error.code).toBe("invalid_request");
    expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("refuses webhook URLs that are not public https (SSRF) with 422 naming destination.url", async () => {
    const account = await createAccount();
    for (const url of [
      "http://hooks.example.com/x",
      "https://127.0.0.1/x",
      "https://169.254.169.254/latest",
      "https://10.0.0.1/",
    ]) {
      const response = await call("POST", "/v1/reports", {
        token: account.token,
        body: { name: "x", type: "subusers", format: "csv", destination: webhookDestination(url) },
      });
      expect(response.status, url).toBe(422);
      expect((await json(response)).details[0].field).toBe("destination.url");
    }
  });

  it("checks a webhook destination with a signed test delivery: a failing receiver is 422 destination_unreachable", async () => {
    const account = await createAccount();
    for (const url of [receiverUrl("/status/500"), receiverUrl("/status/302"), "https://nowhere.example.com/hook"]) {
      const response = await call("POST", "/v1/reports", {
        token: account.token,
        body: { name: "x", type: "subusers", format: "csv", destination: webhookDestination(url) },
      });
      expect(response.status, url).toBe(422);
      expect((await json(response)).code).toBe("destination_unreachable");
    }
    const good = receiverUrl();
    const report = await createReport(account, { destination: webhookDestination(good) });
    const received = await json<Array<{ body: string; headers: Record<string, string> }>>(
      await fetch(`${new URL(good).origin}/__received`),
    );
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]?.body ?? "{}").type).toBe("webhook.test");
    expect(received[0]?.headers["webhook-signature"]).toMatch(/^v1,/);

    const bad = await call("PATCH", `/v1/reports/${report.id}`, {
      token: account.token,
      body: { destination: { type: "webhook", url: receiverUrl("/status/404") } },
    });
    expect((await json(bad)).code).toBe("destination_unreachable");
    const kept = await call("PATCH", `/v1/reports/${report.id}`, {
      token: account.token,
      body: { destination: { type: "webhook", url: receiverUrl("/other") } },
    });
    expect(kept.status).toBe(200);
  });

  it("never returns a webhook's signing secret and keeps it sealed at rest", async () => {
    const account = await createAccount();
    const report = await createReport(account, { destination: webhookDestination() });
    expect(report.destination.signing_secret).toBeUndefined();
    const listed = await call("GET", "/v1/reports", { token: account.token });
    expect(await listed.text()).not.toContain(SIGNING_SECRET.slice(6));
    const row = await env.DB.prepare("SELECT * FROM reports WHERE id = ?").bind(report.id).first();
    expect(JSON.stringify(row)).not.toContain(SIGNING_SECRET.slice(6));
    expect(row?.destination_secret_sealed).toMatch(/^v1\./);
  });

  it("answers another account's report like a missing one (404 report_not_found) on every route", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const report = await createReport(owner);
    const requests: Array<[string, string, unknown?]> = [
      ["GET", `/v1/reports/${report.id}`],
      ["PATCH", `/v1/reports/${report.id}`, { name: "stolen" }],
      ["DELETE", `/v1/reports/${report.id}`],
      [
        "POST",
        `/v1/reports/${report.id}/run`,
        { from: new Date().toISOString().slice(0, 10), to: new Date().toISOString().slice(0, 10) },
      ],
    ];
    for (const [method, path, body] of requests) {
      for (const [path2, token] of [
        [path, other.token],
        [path.replace(report.id, "rep_01JD2W6Q6J5E4V3N0Z9Y8X7W6V"), owner.token],
        [path.replace(report.id, "rep_garbage"), owner.token],
      ] as const) {
        const response = await call(method, path2, { token, body });
        expect(response.status, `${method} ${path2}`).toBe(404);
        expect((await json(response)).code).toBe("report_not_found");
      }
    }
    expect((await json(await call("GET", "/v1/reports", { token: other.token }))).data).toEqual([]);
    expect((await json(await call("GET", `/v1/reports/${report.id}`, { token: owner.token }))).name).toBe(
      "Test report",
    );
  });
});
