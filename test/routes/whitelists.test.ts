import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, gateway, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";

function add(token: string, body: Record<string, unknown>) {
  return call("POST", "/v1/whitelists", { token, body });
}

describe("POST /v1/whitelists (spec §2.7, §4.6)", () => {
  it("creates an entry {id, subuser, product, ip, label, created_at}", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await add(account.token, {
      subuser: subuser.id,
      product: "residential",
      ip: "203.0.113.7",
      label: "office",
    });
    expect(response.status).toBe(201);
    const entry = await json(response);
    expect(entry).toMatchObject({ subuser: subuser.id, product: "residential", ip: "203.0.113.7", label: "office" });
    expect(entry.id).toMatch(/^wl_/);
    expect(new Date(entry.created_at).toISOString()).toBe(entry.created_at);
  });

  it.each([
    ["198.51.100.1", "198.51.100.1"],
    ["198.51.100.1/32", "198.51.100.1"],
    ["198.51.100.0/24", "198.51.100.0/24"],
    ["198.51.100.128/25", "198.51.100.128/25"],
    ["2001:db8::1", "2001:db8::1"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:db8:1:2::/64", "2001:db8:1:2::/64"],
    ["2001:db8::1/128", "2001:db8::1"],
    ["2001:db8::/96", "2001:db8::/96"],
    // IPv4-mapped IPv6 is stored as the IPv4 address or block it maps.
    ["::ffff:198.51.100.1", "198.51.100.1"],
    ["::ffff:198.51.100.0/120", "198.51.100.0/24"],
  ])("accepts %s, stored as %s", async (ip, canonical) => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await add(account.token, { subuser: subuser.id, product: "residential", ip });
    expect(response.status).toBe(201);
    expect((await json(response)).ip).toBe(canonical);
  });

  it.each([
    ["198.51.0.0/16", "invalid_cidr"],
    ["10.0.0.0/23", "invalid_cidr"],
    ["0.0.0.0/0", "invalid_cidr"],
    ["2001:db8::/48", "invalid_cidr"],
    ["::/0", "invalid_cidr"],
    // IPv4-mapped blocks obey the IPv4 bound: ::ffff:0.0.0.0/96 is all of IPv4.
    ["::ffff:0.0.0.0/96", "invalid_cidr"],
    ["::ffff:198.51.0.0/112", "invalid_cidr"],
    ["example.com", "invalid_request"],
    ["proxy.example.com/24", "invalid_request"],
    ["256.0.0.1", "invalid_request"],
    ["198.51.100.1/33", "invalid_request"],
    ["198.51.100.7/24", "invalid_request"],
    ["2001:db8::1/64", "invalid_request"],
    ["not an ip", "invalid_request"],
    ["", "invalid_request"],
  ])("refuses %s with %s", async (ip, code) => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await add(account.token, { subuser: subuser.id, product: "residential", ip });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe(code);
  });

  it("answers a duplicate (after canonicalisation) with 409 already_whitelisted, but allows other scopes", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    const other = await createSubuser(account);
    expect((await add(account.token, { subuser: subuser.id, product: "residential", ip: "2001:db8::1" })).status).toBe(
      201,
    );
    const dup = await add(account.token, { subuser: subuser.id, product: "residential", ip: "2001:DB8:0::1/128" });
    expect(dup.status).toBe(409);
    expect((await json(dup)).code).toBe("already_whitelisted");
    expect((await add(account.token, { subuser: subuser.id, product: "mobile", ip: "2001:db8::1" })).status).toBe(201);
    expect((await add(account.token, { subuser: other.id, product: "residential", ip: "2001:db8::1" })).status).toBe(
      201,
    );
  });

  it("holds at most 50 entries per sub-user per product (a block counts as one): 51st → 422 over_limit", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    for (let i = 0; i < 49; i++) {
      expect(
        (await add(account.token, { subuser: subuser.id, product: "residential", ip: `10.0.${i}.1` })).status,
      ).toBe(201);
    }
    expect((await add(account.token, { subuser: subuser.id, product: "residential", ip: "10.1.0.0/24" })).status).toBe(
      201,
    );
    const over = await add(account.token, { subuser: subuser.id, product: "residential", ip: "10.2.0.1" });
    expect(over.status).toBe(422);
    expect((await json(over)).code).toBe("over_limit");
    expect((await add(account.token, { subuser: subuser.id, product: "mobile", ip: "10.2.0.1" })).status).toBe(201);
  });

  it("keeps the 50-entry limit exact under concurrent adds", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    for (let i = 0; i < 45; i++)
      await add(account.token, { subuser: subuser.id, product: "residential", ip: `10.9.${i}.1` });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        add(account.token, { subuser: subuser.id, product: "residential", ip: `10.8.${i}.1` }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 422)).toHaveLength(5);
  });

  it("requires the product to be one of the sub-user's products", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { products: ["residential"] });
    const response = await add(account.token, { subuser: subuser.id, product: "mobile", ip: "203.0.113.1" });
    expect(response.status).toBe(422);
    const error = await json(response);
    expect(error.code).toBe("invalid_request");
    expect(error.details[0].field).toBe("product");
  });

  it("answers another account's sub-user with 404 subuser_not_found", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const subuser = await createSubuser(owner);
    const response = await add(stranger.token, { subuser: subuser.id, product: "residential", ip: "203.0.113.1" });
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe("subuser_not_found");
  });
});

describe("IPv4-mapped IPv6 cannot get around the IPv4 rules", () => {
  it("an IPv4-mapped entry is a duplicate of its IPv4 form, and mapped source IPs match IPv4 entries", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const base = { subuser: subuser.id, product: "residential" };
    expect((await add(account.token, { ...base, ip: "203.0.113.0/24" })).status).toBe(201);
    const duplicate = await add(account.token, { ...base, ip: "::ffff:203.0.113.0/120" });
    expect(duplicate.status).toBe(409);
    expect((await json(duplicate)).code).toBe("already_whitelisted");

    const authorize = (source_ip: string) =>
      gateway("/authorize", { username: `user_${subuser.name}-type-res-region-us`, source_ip, product: "residential" });
    expect((await json(await authorize("::ffff:203.0.113.9"))).allow).toBe(true);
    expect((await json(await authorize("203.0.113.9"))).allow).toBe(true);
    const outside = await json(await authorize("::ffff:198.51.100.9"));
    expect(outside).toMatchObject({ allow: false, status: 407, error_code: "not-whitelisted" });
  });
});

describe("GET and DELETE /v1/whitelists", () => {
  it("lists a sub-user's entries with pagination, and hides other accounts' entries", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    for (let i = 0; i < 5; i++)
      await add(account.token, { subuser: subuser.id, product: "residential", ip: `192.0.2.${i}` });
    const first = await json(
      await call("GET", `/v1/whitelists?subuser=${subuser.id}&limit=3`, { token: account.token }),
    );
    expect(first.data).toHaveLength(3);
    const second = await json(
      await call("GET", `/v1/whitelists?subuser=${subuser.id}&limit=3&cursor=${first.next_cursor}`, {
        token: account.token,
      }),
    );
    expect(second.data).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    const ips = [...first.data, ...second.data].map((e: { ip: string }) => e.ip).sort();
    expect(ips).toEqual(["192.0.2.0", "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"]);

    const stranger = await createAccount();
    const foreign = await call("GET", `/v1/whitelists?subuser=${subuser.id}`, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect((await call("GET", "/v1/whitelists", { token: account.token })).status).toBe(422);
  });

  it("deletes an entry; another account's entry answers 404 not_found like an unknown id", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const entry = await json(
      await add(account.token, { subuser: subuser.id, product: "residential", ip: "192.0.2.9" }),
    );
    const stranger = await createAccount();
    const foreign = await call("DELETE", `/v1/whitelists/${entry.id}`, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("not_found");
    const unknown = await call("DELETE", "/v1/whitelists/wl_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", { token: account.token });
    expect(unknown.status).toBe(404);
    const deleted = await call("DELETE", `/v1/whitelists/${entry.id}`, { token: account.token });
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ id: entry.id, deleted: true, livemode: true });
    const list = await json(await call("GET", `/v1/whitelists?subuser=${subuser.id}`, { token: account.token }));
    expect(list.data).toEqual([]);
  });

  it("a scoped key cannot touch the whitelist of a sub-user outside its scope", async () => {
    const account = await createAccount();
    const mobile = await createSubuser(account, { products: ["mobile"] });
    const key = await json(await admin("POST", `/accounts/${account.id}/api-keys`, { products: ["residential"] }));
    const response = await add(key.token, { subuser: mobile.id, product: "mobile", ip: "192.0.2.1" });
    expect(response.status).toBe(403);
    expect((await json(response)).code).toBe("subuser_scope_mismatch");
  });
});
