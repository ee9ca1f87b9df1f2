import { describe, expect, it } from "vitest";
import { PASSWORD_PLACEHOLDER } from "../../src/domain/gateway/proxy-lines";
import { parseUsername } from "../../src/domain/gateway/username";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, env, gateway, json } from "../helpers/http";
import { batchIps, orderBatch } from "../helpers/isp";
import { authorize, createSubuser } from "../helpers/subusers";

const GATEWAY = `${env.GATEWAY_HOST}:${env.GATEWAY_PORT}`;
const MINUTE = 60_000;

function proxyList(account: { token: string }, subuser: { id: string }, query: string): Promise<Response> {
  return call("GET", `/v1/subusers/${subuser.id}/proxy-list?${query}`, { token: account.token });
}

async function listLines(account: { token: string }, subuser: { id: string }, query: string): Promise<string[]> {
  const response = await proxyList(account, subuser, query);
  expect(response.status, await response.clone().text()).toBe(200);
  const text = await response.text();
  expect(text.endsWith("\n"), "every line ends with a line break").toBe(true);
  return text.split(/\r?\n/).slice(0, -1);
}

/** `host:port:user:pass` → its username, after checking the rest of the line. */
function usernameOf(line: string): string {
  const [host, port, username, password, ...rest] = line.split(":");
  expect(`${host}:${port}`).toBe(GATEWAY);
  expect(password).toBe(PASSWORD_PLACEHOLDER);
  expect(rest).toEqual([]);
  return username!;
}

function parsed(username: string) {
  const result = parseUsername(username, env.GATEWAY_USER_PREFIX);
  if (!result.ok) throw new Error(`the gateway's parser refuses ${username}: ${result.error}`);
  return result.value;
}

async function expectError(response: Response, status: number, code: string, field?: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  const body = await json(response);
  expect(body).toMatchObject({ code, message: expect.any(String), request_id: expect.stringMatching(/^req_/) });
  if (field) expect(body.details.map((detail: { field: string }) => detail.field)).toContain(field);
}

describe("GET /v1/subusers/{id}/proxy-list", () => {
  it("rotating by default: one txt line host:port:username:PASSWORD, a file not to be cached, whose username the gateway parses", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { label: "list-rotating" });
    const response = await proxyList(account, subuser, "country=US");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toBe(
      'attachment; filename="list-rotating-residential-us-rotating.txt"',
    );
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(response.headers.get("X-Request-Id")).toMatch(/^req_/);
    const text = await response.text();
    expect(text).toBe(`${GATEWAY}:user_${subuser.name}-type-res-region-us:${PASSWORD_PLACEHOLDER}\n`);
    expect(parsed(usernameOf(text.trim())).target).toMatchObject({ region: "us", sessionId: null, sesstime: null });
  });

  it("geo: country, state, city and ASN become the username's segments in the grammar's order", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { products: ["mobile"] });
    const [line, ...more] = await listLines(account, subuser, "country=DE&state=be&city=berlin&asn=3320");
    expect(more).toEqual([]);
    const username = usernameOf(line!);
    expect(username).toBe(`user_${subuser.name}-type-mob-region-de-state-be-city-berlin-asn-3320`);
    expect(parsed(username)).toMatchObject({ product: "mobile", target: { state: "be", city: "berlin", asn: 3320 } });
  });

  it("sticky: 1,000 lines, each its own session id with the sesstime asked, each parsed by the gateway and each accepted with the real password", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const lines = await listLines(account, subuser, "country=us&session=sticky&count=1000&sesstime=30");
    expect(lines).toHaveLength(1000);
    const targets = lines.map((line) => parsed(usernameOf(line)).target);
    expect(new Set(targets.map((target) => target.sessionId)).size).toBe(1000);
    for (const target of targets) expect(target).toMatchObject({ region: "us", sesstime: 30 });

    // The gateway's per-connection path, with the password the caller holds in place of the placeholder.
    for (const line of lines.slice(0, 5)) {
      const decision = await authorize({ username: usernameOf(line), password: subuser.password });
      expect(decision).toMatchObject({ allow: true, subuser: subuser.id, session: { id: expect.any(String) } });
    }
    expect(await authorize({ username: usernameOf(lines[0]!), password: PASSWORD_PLACEHOLDER })).toMatchObject({
      allow: false,
      status: 407,
    });
  });

  it("the longest list, 10,000 sticky lines, answers: as many distinct sessions", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const lines = await listLines(account, subuser, "country=us&session=sticky&count=10000&format=csv");
    expect(lines).toHaveLength(10_001);
    expect(new Set(lines.slice(1).map((row) => row.split(",")[4])).size).toBe(10_000);
  });

  it("sticky lists are new sessions on every download; the defaults are 10 sessions of 10 minutes", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const first = await listLines(account, subuser, "country=us&session=sticky");
    const second = await listLines(account, subuser, "country=us&session=sticky");
    expect(first).toHaveLength(10);
    expect(parsed(usernameOf(first[0]!)).target.sesstime).toBe(10);
    expect(first.filter((line) => second.includes(line))).toEqual([]);
  });

  it("url lines are http:// or socks5:// URLs; csv has a header row and the session columns", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const http = await listLines(account, subuser, "country=gb&format=url");
    expect(http).toEqual([`http://user_${subuser.name}-type-res-region-gb:${PASSWORD_PLACEHOLDER}@${GATEWAY}`]);
    const socks = await listLines(account, subuser, "country=gb&format=url&protocol=socks5&session=sticky&count=2");
    for (const line of socks) {
      const url = new URL(line);
      expect(url.protocol).toBe("socks5:");
      expect(`${url.hostname}:${url.port}`).toBe(GATEWAY);
      expect(parsed(url.username).target.sessionId).toMatch(/^[a-z0-9]{10}$/);
    }

    const response = await proxyList(account, subuser, "country=gb&format=csv&session=sticky&count=3&sesstime=5");
    expect(response.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toMatch(/filename="[a-z0-9-]+-residential-gb-sticky\.csv"$/);
    const [header, ...rows] = (await response.text()).split("\r\n");
    expect(header).toBe("host,port,username,password,session_id,sesstime");
    expect(rows.pop()).toBe("");
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const [host, port, username, password, sessionId, sesstime] = row.split(",");
      expect(`${host}:${port}`).toBe(GATEWAY);
      expect(password).toBe(PASSWORD_PLACEHOLDER);
      expect(parsed(username!).target).toMatchObject({ sessionId, sesstime: Number(sesstime) });
    }
  });

  it("mobile sessions may last 60 minutes, residential 30: longer is 422 naming sesstime", async () => {
    const account = await createAccount();
    const both = await createSubuser(account, { products: ["residential", "mobile"] });
    const mobile = await listLines(account, both, "product=mobile&country=us&session=sticky&count=1&sesstime=60");
    expect(parsed(usernameOf(mobile[0]!))).toMatchObject({ product: "mobile", target: { sesstime: 60 } });
    await expectError(
      await proxyList(account, both, "product=residential&country=us&session=sticky&sesstime=31"),
      422,
      "invalid_request",
      "sesstime",
    );
  });

  it("bad input is 422 naming the field: bounds, unknown country, city without state, options of another mode, unknown parameters", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const cases: Array<[string, string]> = [
      ["", "country"],
      ["country=zz", "country"],
      ["country=usa", "country"],
      ["country=us&city=berlin", "city"],
      ["country=us&state=c%20a", "state"],
      ["country=us&asn=0", "asn"],
      ["country=us&session=sticky&count=0", "count"],
      ["country=us&session=sticky&count=10001", "count"],
      ["country=us&session=sticky&sesstime=0", "sesstime"],
      ["country=us&session=sticky&sesstime=61", "sesstime"],
      ["country=us&count=5", "count"],
      ["country=us&sesstime=5", "sesstime"],
      ["country=us&session=forever", "session"],
      ["country=us&format=xml", "format"],
      ["country=us&protocol=socks5", "protocol"],
      ["country=us&format=url&protocol=ftp", "protocol"],
      ["country=us&product=isp", "product"],
      ["country=us&password=secret", "password"],
    ];
    for (const [query, field] of cases) {
      await expectError(await proxyList(account, subuser, query), 422, "invalid_request", field);
    }
  });

  it("the product must be the sub-user's: another is 422, and one with both must say which", async () => {
    const account = await createAccount();
    const residential = await createSubuser(account);
    await expectError(
      await proxyList(account, residential, "country=us&product=mobile"),
      422,
      "invalid_request",
      "product",
    );
    const both = await createSubuser(account, { products: ["residential", "mobile"] });
    await expectError(await proxyList(account, both, "country=us"), 422, "invalid_request", "product");
    const isp = await createSubuser(account, { products: ["isp"] });
    await expectError(await proxyList(account, isp, "country=us"), 422, "invalid_request", "product");
  });

  it("a key needs subusers:read, and a product scope covering the sub-user's products", async () => {
    const account = await createAccount();
    const mobile = await createSubuser(account, { products: ["mobile"] });
    const residentialOnly = await issueKey(account.id, ["residential"]);
    await expectError(await proxyList(residentialOnly, mobile, "country=us"), 403, "subuser_scope_mismatch");
    const mobileOnly = await issueKey(account.id, ["mobile"]);
    expect((await proxyList(mobileOnly, mobile, "country=us")).status).toBe(200);

    const scoped = async (scopes: Record<string, string>) => {
      const response = await call("POST", "/v1/api-keys", { token: account.token, body: { name: "lists", scopes } });
      return (await json(response)) as { token: string };
    };
    await expectError(
      await proxyList(await scoped({ traffic: "read" }), mobile, "country=us"),
      403,
      "insufficient_scope",
    );
    expect((await proxyList(await scoped({ subusers: "read" }), mobile, "country=us")).status).toBe(200);
  });

  it("a key bound to sub-users lists theirs; another sub-user of the account answers like an unknown one", async () => {
    const account = await createAccount();
    const [mine, other] = [await createSubuser(account), await createSubuser(account)];
    const created = await call("POST", "/v1/api-keys", {
      token: account.token,
      body: { name: "bound", subuser_ids: [mine.id] },
    });
    expect(created.status).toBe(201);
    const bound = (await json(created)) as { token: string };
    expect((await proxyList(bound, mine, "country=us")).status).toBe(200);
    await expectError(await proxyList(bound, other, "country=us"), 404, "subuser_not_found");
  });

  it("another account's sub-user answers exactly like one that does not exist", async () => {
    const owner = await createAccount();
    const subuser = await createSubuser(owner);
    const stranger = await createAccount();
    const foreign = await proxyList(stranger, subuser, "country=us");
    const missing = await proxyList(stranger, { id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }, "country=us");
    const [a, b] = [await json(foreign), await json(missing)];
    expect([foreign.status, missing.status]).toEqual([404, 404]);
    expect({ ...a, request_id: null }).toEqual({ ...b, request_id: null });
    expect(a.code).toBe("subuser_not_found");
  });
});

describe("GET /v1/isp/batches/{id}/proxy-list", () => {
  async function provisionedBatch(account: TestAccount) {
    const batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * MINUTE);
    return { ...batch, ips: await batchIps(account, batch.batchId) };
  }

  function batchList(account: { token: string }, batchId: string, query = ""): Promise<Response> {
    return call("GET", `/v1/isp/batches/${batchId}/proxy-list?${query}`, { token: account.token });
  }

  it("lists each IP on its port with the batch's user and real password, in txt, url and csv; the gateway accepts each", async () => {
    const account = await createAccount({ balance_usd: 500 });
    const { batchId, subuser, ips } = await provisionedBatch(account);
    expect(ips).toHaveLength(5);

    const response = await batchList(account, batchId);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("Content-Disposition")).toBe(`attachment; filename="${batchId}.txt"`);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const txt = await response.text();
    expect(txt).toBe(ips.map((ip) => `${ip.ip}:${ip.port}:user_${subuser.name}:${ip.pass}\n`).join(""));

    for (const line of txt.trim().split("\n")) {
      const [ip, , username, password] = line.split(":");
      const decision = await json(
        await gateway("/authorize", { product: "isp", source_ip: "198.51.100.5", username, password, dest_ip: ip }),
      );
      expect(decision).toMatchObject({ allow: true, subuser: subuser.id, target: { ip, batch_id: batchId } });
    }

    const socks = await (await batchList(account, batchId, "format=url&protocol=socks5")).text();
    expect(socks.split("\n")[0]).toBe(`socks5://user_${subuser.name}:${ips[0]!.pass}@${ips[0]!.ip}:8000`);
    const csv = await batchList(account, batchId, "format=csv");
    expect(csv.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const [header, first] = (await csv.text()).split("\r\n");
    expect(header).toBe("host,port,username,password,country,city,asn");
    const ip = ips[0]!;
    expect(first).toBe([ip.ip, ip.port, ip.user, ip.pass, ip.country, ip.city ?? "", ip.asn].join(","));
  });

  it("needs isp:write (the lines hold the password), the isp product scope and an unbound key; another account's batch is 404; bad input 422", async () => {
    const account = await createAccount({ balance_usd: 500 });
    const { batchId } = await provisionedBatch(account);
    const key = async (scopes: Record<string, string>) =>
      (await json(
        await call("POST", "/v1/api-keys", { token: account.token, body: { name: "isp-lists", scopes } }),
      )) as { token: string };
    await expectError(await batchList(await key({ isp: "read" }), batchId), 403, "insufficient_scope");
    expect((await batchList(await key({ isp: "write" }), batchId)).status).toBe(200);
    await expectError(
      await batchList(await issueKey(account.id, ["residential"]), batchId),
      403,
      "subuser_scope_mismatch",
    );
    await expectError(await batchList(await createAccount(), batchId), 404, "not_found");
    const subuser = await createSubuser(account);
    const bound = await call("POST", "/v1/api-keys", {
      token: account.token,
      body: { name: "bound", subuser_ids: [subuser.id] },
    });
    await expectError(await batchList((await json(bound)) as { token: string }, batchId), 403, "subuser_binding");
    await expectError(await batchList(account, batchId, "format=json"), 422, "invalid_request", "format");
    await expectError(await batchList(account, batchId, "protocol=socks5"), 422, "invalid_request", "protocol");
  });
});
