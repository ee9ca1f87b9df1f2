import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, env, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";

describe("POST /v1/subusers (spec §2.3, §4.2)", () => {
  it("creates a sub-user: generated name, random password shown once, plan limits by default", async () => {
    const account = await createAccount({ plan: "pro" });
    const response = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "scraper-1", products: ["residential"] },
    });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body.id).toMatch(/^sub_/);
    expect(body.name).toMatch(/^s[a-z0-9]{10}$/);
    expect(body.password).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(body).toMatchObject({ label: "scraper-1", products: ["residential"], status: "active" });
    expect(body.concurrent_max).toBe(600);
    expect(body.rps_max).toBe(1000);
  });

  it("never returns the password again and stores only its hash", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const got = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
    expect(got.password).toBeUndefined();
    const listed = await json(await call("GET", "/v1/subusers", { token: account.token }));
    expect(JSON.stringify(listed)).not.toContain(subuser.password);
    const row = await env.DB.prepare("SELECT * FROM subusers WHERE id = ?").bind(subuser.id).first();
    expect(JSON.stringify(row)).not.toContain(subuser.password);
  });

  it.each([
    [{ label: "Has-Upper", products: ["residential"] }, "label"],
    [{ label: "", products: ["residential"] }, "label"],
    [{ label: "a".repeat(65), products: ["residential"] }, "label"],
    [{ label: "under_score", products: ["residential"] }, "label"],
    [{ label: "ok", products: [] }, "products"],
    [{ label: "ok", products: ["residential", "residential"] }, "products"],
    [{ label: "ok", products: ["datacenter"] }, "products.0"],
    [{ label: "ok", products: ["residential"], concurrent_max: 0 }, "concurrent_max"],
    [{ label: "ok", products: ["residential"], rps_max: 10001 }, "rps_max"],
    [{ label: "ok", products: ["residential"], name: "mine" }, "name"],
  ])("rejects %j with 422 invalid_request naming %s", async (body, field) => {
    const account = await createAccount();
    const response = await call("POST", "/v1/subusers", { token: account.token, body });
    expect(response.status).toBe(422);
    const error = await json(response);
    expect(error.code).toBe("invalid_request");
    expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("accepts a 64-character label", async () => {
    const account = await createAccount();
    expect((await createSubuser(account, { label: "a".repeat(64) })).label).toHaveLength(64);
  });

  it("answers 409 label_taken for a label used by a live sub-user of the account, not of another account", async () => {
    const account = await createAccount();
    await createSubuser(account, { label: "dup" });
    const again = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "dup", products: ["mobile"] },
    });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("label_taken");
    const other = await createAccount();
    expect((await createSubuser(other, { label: "dup" })).label).toBe("dup");
  });

  it("frees the label of a deleted sub-user, but never reuses its name", async () => {
    const account = await createAccount();
    const first = await createSubuser(account, { label: "reuse" });
    await call("DELETE", `/v1/subusers/${first.id}`, { token: account.token });
    const second = await createSubuser(account, { label: "reuse" });
    expect(second.name).not.toBe(first.name);
    const names = await env.DB.prepare("SELECT COUNT(*) AS n FROM subusers WHERE name = ?").bind(first.name).first();
    expect(names?.n).toBe(1);
  });

  it.each([
    ["trial", "residential", 25, 50],
    ["trial", "mobile", 10, 25],
    ["starter", "residential", 200, 200],
    ["starter", "mobile", 50, 100],
    ["pro", "residential", 600, 1000],
    ["pro", "mobile", 200, 500],
    ["business", "residential", 2000, 3000],
    ["business", "mobile", 500, 1500],
  ])("%s plan, %s: concurrent_max ≤ %i and rps_max ≤ %i (spec §8.2, §8.3)", async (plan, product, concurrent, rps) => {
    const account = await createAccount({ plan });
    const atLimit = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "at-limit", products: [product], concurrent_max: concurrent, rps_max: rps },
    });
    expect(atLimit.status).toBe(201);
    for (const over of [{ concurrent_max: concurrent + 1 }, { rps_max: rps + 1 }]) {
      const response = await call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: `over-${Object.keys(over)[0]}`.replace("_", "-"), products: [product], ...over },
      });
      expect(response.status).toBe(422);
      expect((await json(response)).code).toBe("over_plan_limit");
    }
  });

  it("caps by the strictest of several products, and applies the mobile defaults of spec §8.4", async () => {
    const account = await createAccount({ plan: "pro" });
    const both = await createSubuser(account, { products: ["residential", "mobile"] });
    expect(both).toMatchObject({ concurrent_max: 100, rps_max: 200 });
    const over = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "both-over", products: ["residential", "mobile"], concurrent_max: 201 },
    });
    expect((await json(over)).code).toBe("over_plan_limit");
  });

  it("does not cap ISP-only sub-users per sub-user, and refuses ISP on the trial plan", async () => {
    const pro = await createAccount({ plan: "pro" });
    const isp = await createSubuser(pro, { products: ["isp"], concurrent_max: 10000, rps_max: 10000 });
    expect(isp.products).toEqual(["isp"]);
    const trial = await createAccount({ plan: "trial" });
    const refused = await call("POST", "/v1/subusers", {
      token: trial.token,
      body: { label: "isp", products: ["isp"] },
    });
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe("feature_not_in_plan");
  });

  it("uses the account's overrides on enterprise plans", async () => {
    const account = await createAccount({ plan: "enterprise" });
    await admin("PATCH", `/accounts/${account.id}`, { limits: { concurrent: { residential: 8000 } } });
    expect((await createSubuser(account, { concurrent_max: 8000 })).concurrent_max).toBe(8000);
  });
});

describe("GET /v1/subusers", () => {
  it("filters by product, status and label_contains", async () => {
    const account = await createAccount();
    const res = await createSubuser(account, { label: "eu-res", products: ["residential"] });
    const mob = await createSubuser(account, { label: "us-mob", products: ["mobile"] });
    await call("PATCH", `/v1/subusers/${mob.id}`, { token: account.token, body: { status: "disabled" } });
    const list = async (query: string) =>
      (await json(await call("GET", `/v1/subusers?${query}`, { token: account.token }))).data.map(
        (s: { id: string }) => s.id,
      );
    expect(await list("product=mobile")).toEqual([mob.id]);
    expect(await list("status=active")).toEqual([res.id]);
    expect(await list("label_contains=eu")).toEqual([res.id]);
    expect(await list("label_contains=-")).toEqual([mob.id, res.id]);
    expect((await call("GET", "/v1/subusers?status=gone", { token: account.token })).status).toBe(422);
    expect((await call("GET", "/v1/subusers?product=dc", { token: account.token })).status).toBe(422);
  });

  it("pages across all sub-users with no duplicates or gaps", async () => {
    const account = await createAccount();
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await createSubuser(account)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `limit=3&cursor=${cursor}` : "limit=3";
      const page = await json(await call("GET", `/v1/subusers?${query}`, { token: account.token }));
      seen.push(...page.data.map((s: { id: string }) => s.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...created].reverse());
  });

  it("never lists another account's sub-users, nor deleted ones", async () => {
    const a = await createAccount();
    const b = await createAccount();
    await createSubuser(a);
    const gone = await createSubuser(b);
    await call("DELETE", `/v1/subusers/${gone.id}`, { token: b.token });
    expect((await json(await call("GET", "/v1/subusers", { token: b.token }))).data).toEqual([]);
  });
});

describe("GET/PATCH/DELETE /v1/subusers/{id}", () => {
  it("answers another account's sub-user exactly like an unknown id: 404 subuser_not_found", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const subuser = await createSubuser(owner);
    for (const [method, path, body] of [
      ["GET", `/v1/subusers/${subuser.id}`, undefined],
      ["PATCH", `/v1/subusers/${subuser.id}`, { status: "disabled" }],
      ["POST", `/v1/subusers/${subuser.id}/rotate-password`, undefined],
      ["DELETE", `/v1/subusers/${subuser.id}`, undefined],
      ["GET", "/v1/subusers/sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", undefined],
      ["GET", "/v1/subusers/not-an-id", undefined],
    ] as const) {
      const response = await call(method, path, { token: stranger.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      const error = await json(response);
      expect(error.code).toBe("subuser_not_found");
      expect(Object.keys(error).sort()).toEqual(["code", "doc_url", "message", "request_id"]);
    }
    expect((await call("GET", `/v1/subusers/${subuser.id}`, { token: owner.token })).status).toBe(200);
  });

  it("PATCH changes label, status and limits only", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await call("PATCH", `/v1/subusers/${subuser.id}`, {
      token: account.token,
      body: { label: "renamed", status: "disabled", concurrent_max: 10, rps_max: 20 },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      label: "renamed",
      status: "disabled",
      concurrent_max: 10,
      rps_max: 20,
    });
  });

  it.each([[{ products: ["mobile"] }], [{ name: "x" }], [{ password: "x" }], [{ status: "deleted" }]])(
    "PATCH %j → 422 invalid_request and nothing changes",
    async (patch) => {
      const account = await createAccount();
      const subuser = await createSubuser(account);
      const response = await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: patch });
      expect(response.status).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
      const after = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
      expect(after).toMatchObject({ products: ["residential"], status: "active", name: subuser.name });
    },
  );

  it("PATCH enforces label uniqueness and plan limits", async () => {
    const account = await createAccount({ plan: "starter" });
    const first = await createSubuser(account, { label: "first" });
    const second = await createSubuser(account, { label: "second" });
    const taken = await call("PATCH", `/v1/subusers/${second.id}`, { token: account.token, body: { label: "first" } });
    expect((await json(taken)).code).toBe("label_taken");
    const over = await call("PATCH", `/v1/subusers/${first.id}`, {
      token: account.token,
      body: { concurrent_max: 201 },
    });
    expect(over.status).toBe(422);
    expect((await json(over)).code).toBe("over_plan_limit");
    const same = await call("PATCH", `/v1/subusers/${first.id}`, { token: account.token, body: { label: "first" } });
    expect(same.status).toBe(200);
  });

  it("DELETE is irreversible: the sub-user disappears from gets, lists and further deletes", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const deleted = await call("DELETE", `/v1/subusers/${subuser.id}`, { token: account.token });
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ id: subuser.id, deleted: true, livemode: true });
    expect((await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token })).status).toBe(404);
    expect((await call("DELETE", `/v1/subusers/${subuser.id}`, { token: account.token })).status).toBe(404);
    const patch = await call("PATCH", `/v1/subusers/${subuser.id}`, {
      token: account.token,
      body: { status: "active" },
    });
    expect(patch.status).toBe(404);
  });
});

describe("rotate-password", () => {
  afterEach(() => vi.useRealTimers());

  it("returns a new password once and stores only its hash", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await call("POST", `/v1/subusers/${subuser.id}/rotate-password`, { token: account.token });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.password).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(body.password).not.toBe(subuser.password);
    const row = await env.DB.prepare("SELECT * FROM subusers WHERE id = ?").bind(subuser.id).first();
    expect(JSON.stringify(row)).not.toContain(body.password);
    const got = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
    expect(JSON.stringify(got)).not.toContain(body.password);
  });
});

describe("API key product scope", () => {
  it("a scoped key cannot create, see or manage sub-users outside its scope (403 subuser_scope_mismatch)", async () => {
    const account = await createAccount();
    const everything = await createSubuser(account, { products: ["residential", "mobile"] });
    const residential = await createSubuser(account, { products: ["residential"] });
    const key = await json(await admin("POST", `/accounts/${account.id}/api-keys`, { products: ["residential"] }));

    const listed = await json(await call("GET", "/v1/subusers", { token: key.token }));
    expect(listed.data.map((s: { id: string }) => s.id)).toEqual([residential.id]);

    for (const [method, path, body] of [
      ["GET", `/v1/subusers/${everything.id}`, undefined],
      ["PATCH", `/v1/subusers/${everything.id}`, { status: "disabled" }],
      ["POST", `/v1/subusers/${everything.id}/rotate-password`, undefined],
      ["DELETE", `/v1/subusers/${everything.id}`, undefined],
      ["POST", "/v1/subusers", { label: "mob", products: ["mobile"] }],
    ] as const) {
      const response = await call(method, path, { token: key.token, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
    expect((await call("GET", `/v1/subusers/${residential.id}`, { token: key.token })).status).toBe(200);
  });
});

describe("GET /v1/subusers?ids=", () => {
  it("lists only the sub-users named (a page's labels in one call); another account's and unknown ids are left out", async () => {
    const account = await createAccount();
    const other = await createAccount();
    const [a, b] = [await createSubuser(account), await createSubuser(account), await createSubuser(account)];
    const foreign = await createSubuser(other);
    const ids = [a?.id, b?.id, foreign.id, "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", a?.id].join(",");
    const page = await json(await call("GET", `/v1/subusers?ids=${ids}`, { token: account.token }));
    expect(page.data.map((subuser: { id: string }) => subuser.id).sort()).toEqual([a?.id, b?.id].sort());
  });

  it.each([
    ["", "empty"],
    ["sub_a,,sub_b", "an empty id"],
    [Array.from({ length: 101 }, (_, i) => `sub_${i}`).join(","), "101 ids"],
    ["sub_a;sub_b", "a bad separator"],
  ])("ids=%s is 422 (%s)", async (ids) => {
    const account = await createAccount();
    const response = await call("GET", `/v1/subusers?ids=${encodeURIComponent(ids)}`, { token: account.token });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("invalid_request");
  });
});
