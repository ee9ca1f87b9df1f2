import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { connect, MCP_URL, MODERN, modernRequest, post, workerFetch } from "./client";

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
const getAccount = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "getAccount", arguments: {} } };

describe("MCP over Streamable HTTP: authentication", () => {
  it("no API key is HTTP 401 with a Bearer challenge and the API's error; the SDK client cannot connect", async () => {
    const response = await post(null, initialize);
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="mcp", resource_metadata="https://api.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(await json(response)).toMatchObject({
      code: "unauthorized",
      doc_url: "https://api.test/docs/errors#unauthorized",
      request_id: expect.stringMatching(/^req_/),
    });
    await expect(connect(`live_${"0".repeat(64)}`)).rejects.toMatchObject({ code: 401 });
  });

  it("an unknown or revoked key is 401 invalid_token, for a tool call too", async () => {
    const unknown = await post(`live_${"x".repeat(64)}`, initialize);
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');

    const account = await createAccount();
    const created = await json(await call("POST", "/v1/api-keys", { token: account.token, body: { name: "agent" } }));
    expect((await post(created.token, getAccount)).status).toBe(200);
    expect((await call("DELETE", `/v1/api-keys/${created.id}`, { token: account.token })).status).toBe(200);
    for (const message of [initialize, toolsList, getAccount]) {
      const revoked = await post(created.token, message);
      expect(revoked.status, message.method).toBe(401);
      expect(revoked.headers.get("WWW-Authenticate"), message.method).toContain('error="invalid_token"');
    }
  });
});

describe("MCP over Streamable HTTP: the transport", () => {
  it("answers one JSON message per POST with no session; GET and DELETE are 405", async () => {
    const account = await createAccount();
    const response = await post(account.token, initialize);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(response.headers.get("Mcp-Session-Id")).toBeNull();
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(await json(response)).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: { protocolVersion: "2025-11-25", serverInfo: { name: "proxy-account-api" } },
    });
    // An older client gets its own revision; one this server does not know gets the latest it speaks.
    const older = await post(account.token, {
      ...initialize,
      params: { ...initialize.params, protocolVersion: "2025-06-18" },
    });
    expect((await json(older)).result.protocolVersion).toBe("2025-06-18");
    const unknown = await post(account.token, {
      ...initialize,
      params: { ...initialize.params, protocolVersion: "1999-01-01" },
    });
    expect((await json(unknown)).result.protocolVersion).toBe("2025-11-25");

    for (const method of ["GET", "DELETE"]) {
      const refused = await workerFetch(MCP_URL, { method, headers: { Authorization: `Bearer ${account.token}` } });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get("Allow"), method).toBe("POST");
    }
  });

  it("a notification is 202 with no body", async () => {
    const account = await createAccount();
    const response = await post(account.token, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("malformed messages are JSON-RPC errors with HTTP 4xx: not JSON, a batch, no method, another media type", async () => {
    const account = await createAccount();
    const cases: Array<[unknown, Record<string, string>, number, number]> = [
      ["{not json", {}, 400, -32700],
      [[toolsList, getAccount], {}, 400, -32600],
      [{ jsonrpc: "2.0", id: 1 }, {}, 400, -32600],
      [{ jsonrpc: "1.0", id: 1, method: "tools/list" }, {}, 400, -32600],
      [{ jsonrpc: "2.0", id: null, method: "tools/list" }, {}, 400, -32600],
      [toolsList, { "Content-Type": "text/plain" }, 415, -32600],
      [toolsList, { Accept: "text/event-stream" }, 406, -32600],
    ];
    for (const [message, headers, status, code] of cases) {
      const response = await post(account.token, message, headers);
      expect(response.status, JSON.stringify(message)).toBe(status);
      const body = await json(response);
      expect(body, JSON.stringify(message)).toMatchObject({ jsonrpc: "2.0", error: { code } });
      expect(body).not.toHaveProperty("id");
    }
  });

  it("a message over 1 MB is refused 413 before it is parsed", async () => {
    const account = await createAccount();
    const label = "x".repeat(1_100_000);
    const response = await post(account.token, { ...getAccount, params: { name: "getAccount", arguments: { label } } });
    expect(response.status).toBe(413);
    expect((await json(response)).code).toBe("payload_too_large");
  });

  it("a browser page of another origin is refused 403 (DNS rebinding); the API's own origin may call", async () => {
    const account = await createAccount();
    const foreign = await post(account.token, toolsList, { Origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await json(foreign)).error.code).toBe(-32600);
    expect((await post(account.token, toolsList, { Origin: "https://api.test" })).status).toBe(200);
  });

  it("an unknown method, an unknown tool and a cursor it never gave are JSON-RPC errors", async () => {
    const account = await createAccount();
    const method = await post(account.token, { jsonrpc: "2.0", id: 7, method: "prompts/list" });
    expect(method.status).toBe(200);
    expect(await json(method)).toMatchObject({ id: 7, error: { code: -32601 } });
    for (const inherited of ["constructor", "__proto__", "toString"]) {
      const response = await post(account.token, { jsonrpc: "2.0", id: 8, method: inherited });
      expect((await json(response)).error.code, inherited).toBe(-32601);
    }
    const tool = await post(account.token, { ...getAccount, params: { name: "dropDatabase", arguments: {} } });
    expect(await json(tool)).toMatchObject({ id: 3, error: { code: -32602, message: "Unknown tool: dropDatabase" } });
    const args = await post(account.token, { ...getAccount, params: { name: "getAccount", arguments: [1] } });
    expect((await json(args)).error.code).toBe(-32602);
    const cursor = await post(account.token, { ...toolsList, params: { cursor: "abc" } });
    expect((await json(cursor)).error.code).toBe(-32602);
  });

  it("a protocol version this server does not speak is 400, listing those it does", async () => {
    const account = await createAccount();
    const response = await post(account.token, toolsList, { "MCP-Protocol-Version": "2024-01-01" });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({
      code: -32022,
      data: { requested: "2024-01-01", supported: expect.arrayContaining([MODERN, "2025-11-25", "2025-03-26"]) },
    });
  });

  it("each message counts once against the key's rate limits; a tool call counts as the API request it makes", async () => {
    const account = await createAccount();
    const remaining = async (message: unknown) =>
      Number((await post(account.token, message)).headers.get("X-RateLimit-Remaining"));
    const listed = await remaining(toolsList);
    const first = await remaining(getAccount);
    const second = await remaining(getAccount);
    expect(first).toBe(listed - 1);
    expect(second).toBe(first - 1);
  });
});

describe("MCP 2026-07-28: stateless requests, no initialize", () => {
  it("server/discover names the versions, capabilities and server; results carry resultType and serverInfo", async () => {
    const account = await createAccount();
    const response = await modernRequest(account.token, "server/discover");
    expect(response.status).toBe(200);
    expect((await json(response)).result).toMatchObject({
      resultType: "complete",
      supportedVersions: expect.arrayContaining([MODERN, "2025-11-25"]),
      capabilities: { tools: {}, resources: {} },
      ttlMs: expect.any(Number),
      cacheScope: "public",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "proxy-account-api" } },
    });
  });

  it("tools/list (private to the key) and tools/call work without a handshake", async () => {
    const account = await createAccount();
    const listed = (await json(await modernRequest(account.token, "tools/list"))).result;
    expect(listed).toMatchObject({ resultType: "complete", cacheScope: "private", ttlMs: expect.any(Number) });
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toContain("getAccount");
    const called = (await json(await modernRequest(account.token, "tools/call", { name: "getAccount", arguments: {} })))
      .result;
    expect(called).toMatchObject({ resultType: "complete", structuredContent: { id: account.id } });
    const read = await modernRequest(account.token, "resources/read", { uri: "docs://errors" });
    expect((await json(read)).result).toMatchObject({ resultType: "complete", cacheScope: "public" });
  });

  it("headers must mirror the body: a missing or different Mcp-Method, Mcp-Name or version is 400 HeaderMismatch", async () => {
    const account = await createAccount();
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "getAccount", _meta: meta } };
    const headers = { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "getAccount" };
    expect((await post(account.token, message, headers)).status).toBe(200);
    // The name may come Base64-encoded, as clients send names that are not plain ASCII.
    const encoded = { ...headers, "Mcp-Name": `=?base64?${btoa("getAccount")}?=` };
    expect((await post(account.token, message, encoded)).status).toBe(200);
    for (const changed of [
      { "Mcp-Method": "tools/list" },
      { "Mcp-Name": "deleteSubuser" },
      { "MCP-Protocol-Version": "2025-11-25" },
    ]) {
      const response = await post(account.token, message, { ...headers, ...changed });
      expect(response.status, JSON.stringify(changed)).toBe(400);
      expect((await json(response)).error.code, JSON.stringify(changed)).toBe(-32020);
    }
    const { "Mcp-Name": _, ...withoutName } = headers;
    expect((await json(await post(account.token, message, withoutName))).error.code).toBe(-32020);
  });

  it("a request without its version or capabilities in _meta is 400 Invalid params; an unknown version 400 too", async () => {
    const account = await createAccount();
    const headers = { "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list" };
    const bare = await post(account.token, toolsList, headers);
    expect(bare.status).toBe(400);
    expect((await json(bare)).error.code).toBe(-32602);
    const noCapabilities = { ...toolsList, params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } } };
    expect((await json(await post(account.token, noCapabilities, headers))).error.code).toBe(-32602);
    const future = {
      ...toolsList,
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2099-01-01",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    };
    const response = await post(account.token, future, { ...headers, "MCP-Protocol-Version": "2099-01-01" });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ code: -32022, data: { requested: "2099-01-01" } });
  });

  it("an unknown method is 404 with Method not found, telling a modern server from a missing endpoint", async () => {
    const account = await createAccount();
    const response = await modernRequest(account.token, "prompts/list");
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe(-32601);
    // `ping` went with the handshake.
    expect((await modernRequest(account.token, "ping")).status).toBe(404);
  });
});
