import { exports } from "cloudflare:workers";
import type { TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { eventually } from "../helpers/usage";

export const EMAIL_DESTINATION = { type: "email", email: "ops@example.com" };
export const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A fresh receiver host per test (test/outbound/receiver.ts). */
export function receiverUrl(path = "/hook"): string {
  return `https://${crypto.randomUUID()}.receiver.test${path}`;
}

export function webhookDestination(url = receiverUrl()) {
  return { type: "webhook", url, signing_secret: SIGNING_SECRET };
}

export async function createReport(account: TestAccount, body: Record<string, unknown> = {}) {
  const response = await call("POST", "/v1/reports", {
    token: account.token,
    body: { name: "Test report", type: "subusers", format: "csv", destination: EMAIL_DESTINATION, ...body },
  });
  if (response.status !== 201) throw new Error(`report creation failed: ${response.status} ${await response.text()}`);
  return json(response);
}

/** UTC date of a moment, `YYYY-MM-DD`. */
export function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export async function startRun(account: TestAccount, reportId: string, from = day(Date.now()), to = from) {
  const response = await call("POST", `/v1/reports/${reportId}/run`, { token: account.token, body: { from, to } });
  if (response.status !== 202) throw new Error(`run failed to start: ${response.status} ${await response.text()}`);
  return (await json(response)).run_id as string;
}

export async function getRun(account: TestAccount, runId: string) {
  return json(await call("GET", `/v1/reports/runs/${runId}`, { token: account.token }));
}

/** Polls the run until the queue has finished it (completed or failed). */
export function finishedRun(account: TestAccount, runId: string, timeoutMs = 20_000) {
  return eventually(
    () => getRun(account, runId),
    (run) => run.status === "completed" || run.status === "failed",
    timeoutMs,
  );
}

/** Runs a report now and waits for the result. */
export async function runToEnd(account: TestAccount, reportId: string, from?: string, to?: string) {
  return finishedRun(account, await startRun(account, reportId, from, to));
}

/** Fetches a link the worker signed, with no API key. */
export function fetchLink(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(new Request(url, { headers }));
}

export async function downloadText(url: string): Promise<string> {
  const response = await fetchLink(url);
  if (response.status !== 200) throw new Error(`download failed: ${response.status} ${await response.text()}`);
  return new TextDecoder().decode(await response.arrayBuffer());
}

/** RFC 4180 parsing for the tests (quoted fields, doubled quotes, CRLF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += char;
  }
  return rows;
}
