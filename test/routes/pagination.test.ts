import { describe, expect, it } from "vitest";
import { admin, json } from "../helpers/http";

async function makeAccounts(n: number) {
  for (let i = 0; i < n; i++)
    await admin("POST", "/accounts", { email: `page-${i}-${crypto.randomUUID()}@example.com` });
}

describe("cursor pagination (shared helper)", () => {
  it("walks every row once, newest first, with next_cursor and a Link header", async () => {
    await makeAccounts(7);
    const seen: string[] = [];
    let path = "/accounts?limit=3";
    let pages = 0;
    for (;;) {
      const response = await admin("GET", path);
      expect(response.status).toBe(200);
      const page = await json(response);
      pages++;
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data.map((a: { id: string }) => a.id));
      if (page.next_cursor === null) {
        expect(response.headers.get("Link")).toBeNull();
        break;
      }
      const link = response.headers.get("Link");
      expect(link).toMatch(/^<https?:\/\/[^>]+cursor=[^>]+>; rel="next"$/);
      const next = new URL(link!.slice(1, link!.indexOf(">")));
      path = `/accounts${next.search}`;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  it("is stable under concurrent inserts: rows created while paging do not shift later pages", async () => {
    await makeAccounts(4);
    const first = await json(await admin("GET", "/accounts?limit=2"));
    await makeAccounts(3);
    const second = await json(await admin("GET", `/accounts?limit=2&cursor=${first.next_cursor}`));
    const firstIds = first.data.map((a: { id: string }) => a.id);
    for (const account of second.data) {
      expect(firstIds).not.toContain(account.id);
      expect(account.id < firstIds[1]).toBe(true);
    }
  });

  it("defaults to 50, caps at 200, and validates limit and cursor", async () => {
    const existing = (await json(await admin("GET", "/accounts?limit=200"))).data.length;
    await makeAccounts(Math.max(0, 55 - existing));
    const firstPage = await json(await admin("GET", "/accounts"));
    expect(firstPage.data).toHaveLength(50);
    expect(firstPage.next_cursor).not.toBeNull();
    for (const query of ["limit=0", "limit=201", "limit=abc", "cursor=garbage"]) {
      const response = await admin("GET", `/accounts?${query}`);
      expect(response.status, query).toBe(422);
      const body = await json(response);
      expect(body.code).toBe("invalid_request");
      expect(body.details[0].field).toBe(query.split("=")[0]);
    }
    expect((await admin("GET", "/accounts?limit=200")).status).toBe(200);
  });
});
