import { describe, expect, it } from "vitest";
import { errorCatalogue } from "../../src/platform/errors";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";

describe("errors that tell how to fix them", () => {
  it("every error body links its code's entry on the page of error codes (doc_url)", async () => {
    const account = await createAccount();
    const missing = await json(
      await call("GET", "/v1/orders/ord_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", { token: account.token }),
    );
    const pageOf = (url: string) => `${new URL(url).pathname}${new URL(url).hash}`;
    expect(pageOf(missing.doc_url)).toBe("/docs/errors#not_found");
    const invalid = await json(await call("POST", "/v1/orders", { token: account.token, body: { product: "x" } }));
    expect(pageOf(invalid.doc_url)).toBe("/docs/errors#invalid_request");
    const unauthorized = await json(await call("GET", "/v1/users/me"));
    expect(pageOf(unauthorized.doc_url)).toBe("/docs/errors#unauthorized");
    // The link is on the API's own origin, where the page is served.
    expect(new URL(unauthorized.doc_url).origin).toBe(new URL(missing.doc_url).origin);
  });

  it("the page of error codes, served without a key and without outside assets, lists every code with its status, cause and fix", async () => {
    const response = await call("GET", "/docs/errors");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("text/html");
    const page = await response.text();
    expect(page).not.toMatch(/<(script|link)\b/);
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      const section = page.slice(page.indexOf(`<section id="${code}">`));
      expect(section, code).toContain(`<span class="status">${entry.status}</span>`);
      const text = section.slice(0, section.indexOf("</section>")).replace(/<\/?code>/g, "`");
      expect(text, code).toContain(entry.message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
      expect(text, code).toContain(entry.fix.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
    }
  });

  it("a refusal by a limit carries the limit, where the caller stands and what raises it", async () => {
    const account = await createAccount({ plan: "trial" });
    const tooWide = await json(
      await call("GET", "/v1/residential/traffic?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z", {
        token: account.token,
      }),
    );
    expect(tooWide).toMatchObject({ code: "range_too_wide", limit: 90, current: 151 });
    expect(tooWide.limit_raised_by).toEqual(expect.any(String));

    const overPlan = await json(
      await call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: "big", products: ["residential"], concurrent_max: 500 },
      }),
    );
    // A trial account's residential sub-users may hold 25 connections.
    expect(overPlan).toMatchObject({ code: "over_plan_limit", limit: 25, current: 500 });
  });
});
