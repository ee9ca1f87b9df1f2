import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { BASE, call, env, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";
import { createReport, EMAIL_DESTINATION, fetchLink, getRun, runToEnd } from "./helpers";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function completedRun() {
  const account = await createAccount();
  await createSubuser(account, { label: "linked" });
  const report = await createReport(account);
  const run = await runToEnd(account, report.id);
  expect(run.status).toBe("completed");
  return { account, report, run };
}

describe("signed download links (spec §2.11, §8.5: valid 1 hour)", () => {
  it("works without an API key and says when it expires; every read of the run mints a fresh link", async () => {
    const { account, run } = await completedRun();
    const response = await fetchLink(run.download_url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("linked");
    expect(new URL(run.download_url).origin).toBe(BASE);
    // Counted against the client address's window, as calls without an API key are.
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
    const expiresIn = Date.parse(run.download_expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(3590_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 10_000);
    const again = await getRun(account, run.run_id);
    expect(again.download_url).not.toBe(run.download_url);
  });

  it("an answer's link points at the origin the request came to; a mailed one at API_ORIGIN (no request there)", async () => {
    const sent: Array<{ text: string }> = [];
    const original = env.EMAIL.send;
    vi.spyOn(env.EMAIL, "send").mockImplementation(async (message: any) => {
      sent.push(message);
      return Reflect.apply(original, env.EMAIL, [message]);
    });
    const account = await createAccount();
    const report = await createReport(account, { destination: EMAIL_DESTINATION });
    const run = await runToEnd(account, report.id);
    // A local server on any port (plain `wrangler dev` keeps the production API_ORIGIN of wrangler.toml).
    const local = "http://localhost:8801";
    const answer = await exports.default.fetch(
      new Request(`${local}/v1/reports/runs/${run.run_id}`, { headers: { Authorization: `Bearer ${account.token}` } }),
    );
    const link = (await json(answer)).download_url as string;
    expect(new URL(link).origin).toBe(local);
    expect((await fetchLink(link)).status).toBe(200);
    expect(sent).toHaveLength(1);
    const mailed = /https?:\/\/\S+\/download\?\S+/.exec(sent[0]?.text ?? "")?.[0] ?? "";
    expect(new URL(mailed).origin).toBe(env.API_ORIGIN);
    expect(env.API_ORIGIN).not.toBe(local);
  });

  it("answers 410 download_link_expired once the hour is over (moved clock), and a fresh link works again", async () => {
    const { account, run } = await completedRun();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(run.download_expires_at) + 1000);
    const expired = await fetchLink(run.download_url);
    expect(expired.status).toBe(410);
    expect((await json(expired)).code).toBe("download_link_expired");
    const fresh = await getRun(account, run.run_id);
    expect((await fetchLink(fresh.download_url)).status).toBe(200);
  });

  it("answers 403 download_link_invalid for a tampered signature, expiry or run id", async () => {
    const { run } = await completedRun();
    const other = await completedRun();
    const url = new URL(run.download_url);
    const sig = url.searchParams.get("sig") ?? "";
    const tampered = [
      (u: URL) => u.searchParams.set("sig", (sig[0] === "a" ? "b" : "a") + sig.slice(1)),
      (u: URL) => u.searchParams.set("exp", String(Number(u.searchParams.get("exp")) + 3600)),
      (u: URL) => {
        u.pathname = u.pathname.replace(run.run_id, other.run.run_id);
      },
      (u: URL) => u.searchParams.delete("sig"),
      (u: URL) => u.searchParams.set("sig", "not-hex"),
    ];
    for (const change of tampered) {
      const link = new URL(url);
      change(link);
      const response = await fetchLink(link.toString());
      expect(response.status, link.toString()).toBe(403);
      expect((await json(response)).code).toBe("download_link_invalid");
    }
  });

  it("gives no link before the run has finished, and none for another account's run (404)", async () => {
    const { account, report, run } = await completedRun();
    const stranger = await createAccount();
    const response = await call("GET", `/v1/reports/runs/${run.run_id}`, { token: stranger.token });
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe("report_run_not_found");
    expect((await call("GET", "/v1/reports/runs/run_garbage", { token: account.token })).status).toBe(404);
    // The queue holds the message (as if the consumer were behind): the run stays queued.
    vi.spyOn(env.REPORT_RUNS_QUEUE, "send").mockResolvedValue(undefined as never);
    const queued = await call("POST", `/v1/reports/${report.id}/run`, {
      token: account.token,
      body: { from: run.from.slice(0, 10), to: run.from.slice(0, 10) },
    });
    expect(queued.status).toBe(202);
    const accepted = await json(queued);
    expect(accepted).toMatchObject({ status: "queued" });
    const early = await getRun(account, accepted.run_id);
    expect(early).toMatchObject({
      status: "queued",
      report_id: report.id,
      trigger: "manual",
      format: "csv",
      download_url: null,
      rows: null,
    });
  });
});

describe("POST /reports/{id}/run: the period", () => {
  it("covers whole UTC days from..to inclusive, up to 90 days back and not after today", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-23T10:00:00Z"));
    const account = await createAccount();
    const report = await createReport(account);
    const run = async (from: string, to: string) =>
      call("POST", `/v1/reports/${report.id}/run`, { token: account.token, body: { from, to } });
    const accepted = await json(await run("2026-11-01", "2026-11-03"));
    const got = await json(await call("GET", `/v1/reports/runs/${accepted.run_id}`, { token: account.token }));
    expect(got).toMatchObject({ from: "2026-11-01T00:00:00.000Z", to: "2026-11-04T00:00:00.000Z" });
    expect((await run("2026-08-25", "2026-08-25")).status).toBe(202);
    for (const [from, to, field] of [
      ["2026-08-24", "2026-08-25", "from"],
      ["2026-11-05", "2026-11-04", "from"],
      ["2026-11-23", "2026-11-24", "to"],
      ["2026-02-30", "2026-03-01", "from"],
      ["2026-11-01T00:00:00Z", "2026-11-02", "from"],
    ]) {
      const response = await run(from as string, to as string);
      expect(response.status, `${from}..${to}`).toBe(422);
      expect((await json(response)).details[0].field).toBe(field);
    }
  });
});
