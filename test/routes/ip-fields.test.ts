import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, gateway, json } from "../helpers/http";
import { authorize, createSubuser, gateOf, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, usageRecord } from "../helpers/usage";

/** Text of an address's characters that is no address. */
const NOT_ADDRESSES = ["999.1.1.1", "abc", "....", "1.2.3", "::g", "01.2.3.4", "::ffff:01.2.3.4", ":::"];
/** Addresses in other than canonical form, and their canonical text. */
const NON_CANONICAL = [
  ["2001:DB8::0:1", "2001:db8::1"],
  ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
  ["::ffff:192.0.2.1", "192.0.2.1"],
  ["::FFFF:C000:0201", "192.0.2.1"],
];

async function stickyUser(sessionId: string): Promise<{ account: TestAccount; subuser: TestSubuser; user: string }> {
  const account = await createAccount({ bandwidthGb: 1 });
  const subuser = await createSubuser(account);
  return { account, subuser, user: username(subuser.name, `type-res-region-us-session-${sessionId}-sesstime-10`) };
}

function pinSession(subuser: TestSubuser, user: string, exitIp: unknown) {
  return gateway("/sessions", { node: "node-1", name: subuser.name, username: user, exit_ip: exitIp });
}

async function refusal(response: Response): Promise<{ status: number; code: string; fields: string[] }> {
  const body = await json(response);
  return {
    status: response.status,
    code: body.code,
    fields: (body.details ?? []).map((detail: { field: string }) => detail.field),
  };
}

describe("IP fields the internal gateway API takes are addresses, kept in canonical form", () => {
  it.each(NOT_ADDRESSES)(
    "POST /internal/gateway/sessions refuses exit_ip %j (not an address) with 422",
    async (exit) => {
      const { subuser, user } = await stickyUser("bad1");
      expect(await refusal(await pinSession(subuser, user, exit))).toEqual({
        status: 422,
        code: "invalid_request",
        fields: ["exit_ip"],
      });
    },
  );

  it.each(NON_CANONICAL)(
    "POST /internal/gateway/sessions pins exit_ip %s as %s, and authorize hands that back",
    async (exit, canonical) => {
      const { subuser, user } = await stickyUser("canon1");
      const response = await pinSession(subuser, user, exit);
      expect(response.status).toBe(200);
      expect((await json(response)).session.exit_ip).toBe(canonical);
      const decision = await authorize({ username: user, password: subuser.password });
      expect(decision.session.exit_ip).toBe(canonical);
    },
  );

  it("POST /internal/gateway/release refuses an exit_ip that is not an address (422) and pins a valid one canonically", async () => {
    const { subuser, user } = await stickyUser("rel1");
    const first = await authorize({ username: user, password: subuser.password });
    expect(first.session.exit_ip).toBeNull();
    for (const exit of NOT_ADDRESSES) {
      expect(await refusal(await gateway("/release", { lease: first.lease, exit_ip: exit }))).toEqual({
        status: 422,
        code: "invalid_request",
        fields: ["exit_ip"],
      });
    }
    expect(await json(await gateway("/release", { lease: first.lease, exit_ip: "2001:DB8::0:1" }))).toEqual({
      released: true,
    });
    const second = await authorize({ username: user, password: subuser.password });
    expect(second.session).toMatchObject({ id: first.session.id, exit_ip: "2001:db8::1" });
  });

  it("POST /internal/gateway/authorize refuses a source_ip or dest_ip that is not an address with 422", async () => {
    const { subuser, user } = await stickyUser("auth1");
    for (const ip of NOT_ADDRESSES) {
      for (const field of ["source_ip", "dest_ip"]) {
        const body = { username: user, password: subuser.password, source_ip: "198.51.100.10", product: "residential" };
        const response = await gateway("/authorize", { ...body, [field]: ip });
        expect(await refusal(response)).toEqual({ status: 422, code: "invalid_request", fields: [field] });
      }
    }
  });

  it("a session exit stored before exits were checked, that is not an address, is never handed back: it is unpinned", async () => {
    const { subuser, user } = await stickyUser("old1");
    const first = await authorize({ username: user, password: subuser.password });
    await runInDurableObject(gateOf(subuser), (_gate, state) => {
      state.storage.sql.exec("UPDATE sessions SET exit_ip = '....' WHERE id = ?", first.session.id);
    });
    await abortAllDurableObjects();
    const again = await authorize({ username: user, password: subuser.password });
    expect(again.session).toMatchObject({ id: first.session.id, exit_ip: null });
    const pinned = await json(await pinSession(subuser, user, "203.0.113.70"));
    expect(pinned.session).toMatchObject({ id: first.session.id, exit_ip: "203.0.113.70" });
  });
});

describe("usage records: dest_ip, exit_ip and client_ip are addresses, stored in canonical form", () => {
  it.each([
    ["exit_ip", "...."],
    ["exit_ip", "999.1.1.1"],
    ["client_ip", "abc"],
    ["client_ip", "1.2.3"],
    ["dest_ip", "::g"],
  ])(
    "POST /internal/gateway/usage refuses a record whose %s is %j (not an address): the batch is 422 naming it",
    async (field, value) => {
      const { subuser } = await stickyUser("use1");
      const name = username(subuser.name);
      const response = await reportUsage([usageRecord(name), usageRecord(name, { [field]: value })]);
      expect(await refusal(response)).toEqual({ status: 422, code: "invalid_request", fields: [`records.1.${field}`] });
    },
  );

  it("a record with addresses in non-canonical form shows them canonical in GET /v1/residential/requests", async () => {
    const { account, subuser } = await stickyUser("use2");
    const name = username(subuser.name);
    const response = await reportUsage([
      usageRecord(name, { exit_ip: "2001:DB8::0:1", client_ip: "::ffff:198.51.100.23" }),
      usageRecord(name, { exit_ip: "::ffff:203.0.113.9" }),
    ]);
    expect(response.status).toBe(202);
    expect((await json(response)).accepted).toBe(2);
    const log = await eventually(
      async () => json(await call("GET", "/v1/residential/requests", { token: account.token })),
      (body) => body.data.length === 2,
    );
    expect(log.data.map((entry: { exit_ip: string }) => entry.exit_ip).sort()).toEqual(["2001:db8::1", "203.0.113.9"]);
  });

  it("a sticky session pinned by its first usage record takes the record's exit in canonical form", async () => {
    const { subuser, user } = await stickyUser("use3");
    const first = await authorize({ username: user, password: subuser.password });
    expect(first.session.exit_ip).toBeNull();
    expect((await reportUsage([usageRecord(user, { exit_ip: "2001:DB8::0:7" })])).status).toBe(202);
    const pinned = await eventually(
      () => authorize({ username: user, password: subuser.password }),
      (decision) => decision.session.exit_ip !== null,
    );
    expect(pinned.session.exit_ip).toBe("2001:db8::7");
  });
});

describe("whitelists take addresses, not address-like text", () => {
  it.each(NOT_ADDRESSES)("POST /v1/whitelists refuses ip %j (not an address) with 422 invalid_request", async (ip) => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await call("POST", "/v1/whitelists", {
      token: account.token,
      body: { subuser: subuser.id, product: "residential", ip },
    });
    expect(await refusal(response)).toEqual({ status: 422, code: "invalid_request", fields: ["ip"] });
  });
});
