import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";

type Entry = Record<string, any>;

async function auditLog(account: { token: string }, query = ""): Promise<Entry[]> {
  const response = await call("GET", `/v1/audit-events${query}`, { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

async function entriesOf(account: TestAccount, resourceId: string): Promise<Entry[]> {
  return auditLog(account, `?resource=${resourceId}`);
}

describe("the audit log", () => {
  it("records a sub-user's life — created, updated, password rotated, deleted — with actor, source IP, request id and the changed fields, never a secret", async () => {
    const account = await createAccount();
    const ip = { "CF-Connecting-IP": "203.0.113.9" };
    const created = await call("POST", "/v1/subusers", {
      token: account.token,
      headers: ip,
      body: { label: "scraper", products: ["residential"] },
    });
    const subuser = await json(created);
    await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { label: "scraper-2", rps_max: 5 } });
    await call("POST", `/v1/subusers/${subuser.id}/rotate-password`, { token: account.token });
    await call("DELETE", `/v1/subusers/${subuser.id}`, { token: account.token });

    const entries = await entriesOf(account, subuser.id);
    expect(entries.map((entry) => entry.action)).toEqual([
      "subuser.deleted",
      "subuser.password_rotated",
      "subuser.updated",
      "subuser.created",
    ]);
    const [deleted, rotated, updated, creation] = entries as [Entry, Entry, Entry, Entry];
    expect(creation).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      resource_type: "subuser",
      resource_id: subuser.id,
      products: ["residential"],
      actor_key: account.keyId,
      source_ip: "203.0.113.9",
      request_id: created.headers.get("X-Request-Id"),
      changes: { label: "scraper", products: ["residential"], status: "active", password: "[redacted]" },
      previous: null,
    });
    expect(updated.changes).toEqual({ label: "scraper-2", rps_max: 5 });
    expect(updated.previous).toEqual({ label: "scraper", rps_max: subuser.rps_max });
    expect(rotated.changes).toMatchObject({ password: "[redacted]" });
    expect(deleted.changes).toEqual({ deleted_at: expect.any(String) });
    // No secret's value, hash or seal is ever in the log.
    expect(JSON.stringify(entries)).not.toContain(subuser.password);
    expect(JSON.stringify(entries)).not.toMatch(/hash|sealed/i);
  });
});
