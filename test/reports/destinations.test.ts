import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { reportRuns, reports } from "../../src/db/schema";
import { domainContext } from "../../src/domain/context";
import { deliver } from "../../src/domain/reports/destinations";
import { AWS_RETRIES, S3_PART_SIZE } from "../../src/domain/reports/destinations/s3";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { createSubuser } from "../helpers/subusers";
import {
  createReport,
  downloadText,
  fetchLink,
  receiverUrl,
  runToEnd,
  SIGNING_SECRET,
  webhookDestination,
} from "./helpers";

afterEach(() => vi.restoreAllMocks());

const ROLE = "arn:aws:iam::123456789012:role/proxy-reports";
const s3Destination = (bucket: string, role = ROLE) => ({ type: "s3", bucket, prefix: "exports/", role_arn: role });
const gcsDestination = (serviceAccount = "reports@acme.iam.gserviceaccount.com") => ({
  type: "gcs",
  bucket: "acme-gcs",
  prefix: "proxy/",
  service_account_email: serviceAccount,
});

async function cloudLog(service: string): Promise<Array<Record<string, any>>> {
  return json(await fetch(`https://${service}.cloud.test/__log`));
}

async function storedObject(path: string): Promise<Response> {
  return fetch(`https://s3.cloud.test/__objects/${path}`);
}

type Received = { body: string; headers: Record<string, string> };

/** A webhook report of `account` run once: the bodies its receiver got (pre-flight, then run), signature-checked. */
async function webhookBodies(
  account: TestAccount,
): Promise<{ received: Received[]; bodies: Array<Record<string, any>> }> {
  const url = receiverUrl();
  const report = await createReport(account, { destination: webhookDestination(url) });
  const run = await runToEnd(account, report.id);
  expect(run.status, run.error).toBe("completed");
  const received = await json<Received[]>(await fetch(`${new URL(url).origin}/__received`));
  const bodies = received.map((r) => new Webhook(SIGNING_SECRET).verify(r.body, r.headers) as Record<string, any>);
  return { received, bodies };
}

describe("report destinations", () => {
  it("email: sends the download link through the send_email binding, never the file", async () => {
    const sent: Array<Record<string, any>> = [];
    const original = env.EMAIL.send;
    vi.spyOn(env.EMAIL, "send").mockImplementation(async (message: any) => {
      sent.push(message);
      return Reflect.apply(original, env.EMAIL, [message]);
    });
    const account = await createAccount();
    await createSubuser(account, { label: "mailed" });
    const report = await createReport(account, {
      name: "Mail me",
      destination: { type: "email", email: "ops@example.com" },
    });
    const run = await runToEnd(account, report.id);
    expect(run.status, run.error).toBe("completed");
    expect(sent).toHaveLength(1);
    const mail = sent[0] as Record<string, any>;
    expect(mail).toMatchObject({
      to: "ops@example.com",
      from: env.REPORTS_EMAIL_FROM,
      subject: "Report ready: Mail me",
    });
    const link = /https:\/\/api\.test\/v1\/reports\/runs\/\S+/.exec(mail.text)?.[0] ?? "";
    expect(await downloadText(link)).toContain("mailed");
    expect(mail.attachments).toBeUndefined();
  });

  it("email: a mail the binding refuses fails the run with the reason; the file stays downloadable", async () => {
    vi.spyOn(env.EMAIL, "send").mockRejectedValue(new Error("destination address is not verified"));
    const account = await createAccount();
    const report = await createReport(account);
    const run = await runToEnd(account, report.id);
    expect(run.status).toBe("failed");
    expect(run.error).toBe("destination failed: email: destination address is not verified");
    expect((await fetchLink(run.download_url)).status).toBe(200);
  });

  it("webhook: a report_run.completed event with the link and figures, verified with standardwebhooks", async () => {
    const account = await createAccount();
    await createSubuser(account, { label: "hooked" });
    const url = receiverUrl();
    const report = await createReport(account, { destination: webhookDestination(url) });
    const run = await runToEnd(account, report.id);
    expect(run.status).toBe("completed");
    const received = await json<Array<{ body: string; headers: Record<string, string> }>>(
      await fetch(`${new URL(url).origin}/__received`),
    );
    expect(received).toHaveLength(2); // the pre-flight test delivery, then the run
    const delivery = received[1] as { body: string; headers: Record<string, string> };
    const event = new Webhook(SIGNING_SECRET).verify(delivery.body, delivery.headers) as Record<string, any>;
    // One envelope: the shape and the event id webhook endpoints receive for the same event.
    expect(delivery.headers["webhook-id"]).toBe(`evt_${run.run_id.slice(4)}`);
    expect(Object.keys(event).sort()).toEqual(["created_at", "data", "id", "livemode", "type"]);
    expect(event.id).toBe(delivery.headers["webhook-id"]);
    expect(event.type).toBe("report_run.completed");
    const recorded = await call("GET", `/v1/events/${event.id}`, { token: account.token });
    expect(recorded.status).toBe(200);
    expect(await json<{ type: string }>(recorded)).toMatchObject({ type: "report_run.completed" });
    expect(event.data).toMatchObject({
      run_id: run.run_id,
      report_id: report.id,
      report_name: "Test report",
      status: "completed",
      rows: 1,
      bytes: run.bytes,
      format: "csv",
    });
    expect(await downloadText(event.data.download_url)).toContain("hooked");
    expect(() =>
      new Webhook("whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldCBhdCBhbGwh").verify(delivery.body, delivery.headers),
    ).toThrow();
  });

  it("webhook: a live account's bodies (the pre-flight webhook.test and report_run.completed) carry livemode true, signed", async () => {
    const { received, bodies } = await webhookBodies(await createAccount());
    expect(bodies.map((b) => [b.type, b.livemode])).toEqual([
      ["webhook.test", true],
      ["report_run.completed", true],
    ]);
    // livemode is inside the signed bytes: flipping it breaks the signature.
    const delivery = received[1] as Received;
    const flipped = delivery.body.replace('"livemode":true', '"livemode":false');
    expect(flipped).not.toBe(delivery.body);
    expect(() => new Webhook(SIGNING_SECRET).verify(flipped, delivery.headers)).toThrow();
  });

  it("webhook: a sandbox twin's bodies (test_ key: pre-flight and report_run.completed) carry livemode false", async () => {
    const { bodies } = await webhookBodies(await sandboxOf(await createAccount()));
    expect(bodies.map((b) => [b.type, b.livemode])).toEqual([
      ["webhook.test", false],
      ["report_run.completed", false],
    ]);
  });

  it("s3: assumes the role with STS (external id = account id), then PUTs the object the fake checked the signature of", async () => {
    const account = await createAccount();
    await createSubuser(account, { label: "to-s3" });
    const report = await createReport(account, { format: "json", destination: s3Destination("acme-exports") });
    const run = await runToEnd(account, report.id);
    expect(run.status, run.error).toBe("completed");
    const assumed = (await cloudLog("sts")).filter((entry) => entry.params?.RoleSessionName === `report-${run.run_id}`);
    expect(assumed).toHaveLength(1);
    expect(assumed[0]).toMatchObject({ status: 200, params: { RoleArn: ROLE, ExternalId: account.id } });
    const object = await storedObject(`acme-exports/exports/${report.id}/${run.run_id}.ndjson`);
    expect(object.status).toBe(200);
    expect(object.headers.get("Content-Type")).toBe("application/x-ndjson; charset=utf-8");
    const uploaded = new TextDecoder().decode(await object.arrayBuffer());
    expect(uploaded).toBe(await downloadText(run.download_url));
    expect(JSON.parse(uploaded.trim()).label).toBe("to-s3");
  });

  it("s3: a file above one part goes up as a multipart upload, reassembled byte for byte", async () => {
    const account = await createAccount();
    const report = await createReport(account, { destination: s3Destination("acme-large") });
    const run = await runToEnd(account, report.id);
    // Replace the run's stored file by one larger than an S3 part, then deliver it again.
    const big = new Uint8Array(S3_PART_SIZE + 1234).map((_, i) => 97 + (i % 26));
    const ctx = domainContext(env);
    const stored = await ctx.db.select().from(reportRuns).where(eq(reportRuns.id, run.run_id)).get();
    const definition = await ctx.db.select().from(reports).where(eq(reports.id, report.id)).get();
    if (!stored?.fileKey || !definition) throw new Error("run not stored");
    await env.REPORTS.put(stored.fileKey, big);
    await deliver(ctx, {
      report: definition,
      run: { ...stored, fileKey: stored.fileKey, rows: 0, bytes: big.length },
      downloadUrl: run.download_url,
      expiresAt: Date.now(),
      fileName: `${run.run_id}.csv`,
      contentType: "text/csv; charset=utf-8",
    });
    const object = await storedObject(`acme-large/exports/${report.id}/${run.run_id}.csv`);
    const uploaded = new Uint8Array(await object.arrayBuffer());
    expect(uploaded.length).toBe(big.length);
    const digest = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    expect(await digest(uploaded)).toEqual(await digest(big));
    const parts = (await cloudLog("s3")).filter((e) => e.path.includes("partNumber") && e.path.includes(run.run_id));
    expect(parts.map((e) => new URL(`https://x${e.path}`).searchParams.get("partNumber"))).toEqual(["1", "2"]);
  }, 60_000);

  it("s3 without STS (STS_ENDPOINT empty, local development): signs with our own keys against the local endpoint", async () => {
    const account = await createAccount();
    const report = await createReport(account, { destination: s3Destination("local-dev") });
    const run = await runToEnd(account, report.id);
    const ctx = domainContext({ ...env, STS_ENDPOINT: "" });
    const stored = await ctx.db.select().from(reportRuns).where(eq(reportRuns.id, run.run_id)).get();
    const definition = await ctx.db.select().from(reports).where(eq(reports.id, report.id)).get();
    if (!stored?.fileKey || !definition) throw new Error("run not stored");
    const assumedBefore = (await cloudLog("sts")).length;
    await deliver(ctx, {
      report: definition,
      run: { ...stored, fileKey: stored.fileKey, rows: stored.rows ?? 0, bytes: stored.bytes ?? 0 },
      downloadUrl: run.download_url,
      expiresAt: Date.now(),
      fileName: `${run.run_id}-local.csv`,
      contentType: "text/csv; charset=utf-8",
    });
    expect((await cloudLog("sts")).length).toBe(assumedBefore);
    expect((await storedObject(`local-dev/exports/${report.id}/${run.run_id}-local.csv`)).status).toBe(200);
  });

  it("s3: aws4fetch retries are bounded (a 500 is tried 1 + AWS_RETRIES times), then the run fails and keeps its file", async () => {
    const account = await createAccount();
    await createSubuser(account, { label: "kept" });
    const report = await createReport(account, { destination: s3Destination("failing-bucket") });
    const started = Date.now();
    const run = await runToEnd(account, report.id);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.status).toBe("failed");
    expect(run.error).toBe("destination failed: s3: PUT failed (InternalError)");
    const puts = (await cloudLog("s3")).filter((e) => e.path.includes(`failing-bucket/exports/${report.id}/`));
    expect(puts).toHaveLength(1 + AWS_RETRIES);
    expect(run.download_url).toMatch(/^https:\/\//);
    expect(await downloadText(run.download_url)).toContain("kept");
  });

  it("s3: a role we may not assume fails the run with the STS error code", async () => {
    const account = await createAccount();
    const report = await createReport(account, {
      destination: s3Destination("acme-exports", "arn:aws:iam::123456789012:role/denied"),
    });
    const run = await runToEnd(account, report.id);
    expect(run.status).toBe("failed");
    expect(run.error).toBe(
      "destination failed: s3: could not assume arn:aws:iam::123456789012:role/denied (AccessDenied)",
    );
    expect((await fetchLink(run.download_url)).status).toBe(200);
  });

  it("gcs: signs a JWT for our token, impersonates the customer's service account, uploads the file", async () => {
    const account = await createAccount();
    await createSubuser(account, { label: "to-gcs" });
    const report = await createReport(account, { format: "tsv", destination: gcsDestination() });
    const run = await runToEnd(account, report.id);
    expect(run.status, run.error).toBe("completed");
    const impersonations = (await cloudLog("iam")).filter((e) =>
      e.path.includes("reports%40acme.iam.gserviceaccount.com"),
    );
    expect(impersonations.at(-1)?.status).toBe(200);
    const object = await storedObject(`acme-gcs/proxy/${report.id}/${run.run_id}.tsv`);
    expect(object.status).toBe(200);
    expect(new TextDecoder().decode(await object.arrayBuffer())).toBe(await downloadText(run.download_url));
  });

  it("gcs: a refused impersonation fails the run with IAM's reason; the file stays downloadable", async () => {
    const account = await createAccount();
    const report = await createReport(account, { destination: gcsDestination("denied@acme.iam.gserviceaccount.com") });
    const run = await runToEnd(account, report.id);
    expect(run.status).toBe("failed");
    expect(run.error).toContain("gcs: impersonating denied@acme.iam.gserviceaccount.com failed (Permission");
    expect((await fetchLink(run.download_url)).status).toBe(200);
  });

  it("webhook: a receiver that fails at delivery time fails the run, keeps the file, and records report_run.failed", async () => {
    const account = await createAccount();
    const url = receiverUrl();
    const report = await createReport(account, { destination: webhookDestination(url) });
    await fetch(`${new URL(url).origin}/__script`, { method: "POST", body: JSON.stringify([{ status: 503 }]) });
    const run = await runToEnd(account, report.id);
    expect(run.status).toBe("failed");
    expect(run.error).toBe("destination failed: webhook: the endpoint answered 503");
    expect((await fetchLink(run.download_url)).status).toBe(200);
    const events = await env.DB.prepare(
      "SELECT type, payload FROM events WHERE account_id = ? AND type LIKE 'report_run.%'",
    )
      .bind(account.id)
      .all<{ type: string; payload: string }>();
    expect(events.results.map((e) => e.type)).toEqual(["report_run.failed"]);
    expect(JSON.parse(events.results[0]?.payload ?? "{}")).toMatchObject({ run_id: run.run_id, status: "failed" });
  });
});
