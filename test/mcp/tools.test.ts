import Ajv2020 from "ajv/dist/2020";
import { beforeAll, describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../src/api-docs/document";
import { type Tool, toolsOf } from "../../src/mcp/tools";
import { call, json } from "../helpers/http";

const HTTP_METHODS = ["get", "put", "post", "delete", "patch"] as const;
/** What MCP clients accept everywhere (some cap names at 64 characters and these characters). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

let document: OpenApiDocument;
let tools: Tool[];
const byName = (name: string) => tools.find((tool) => tool.definition.name === name) as Tool;

beforeAll(async () => {
  // The document the worker serves: the tools are generated from nothing else.
  document = await json<OpenApiDocument>(await call("GET", "/v1/openapi.json"));
  tools = toolsOf(document);
});

function operations() {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ path, method, operation }] : [];
    }),
  );
}

describe("MCP tools generated from the OpenAPI document", () => {
  it("every operation an API key authorizes has one tool named by its operationId; the signed download link, WebSockets and the account's people have none", () => {
    const keyOperations = operations().filter(
      ({ operation }) =>
        operation.security?.some((s) => "ApiKey" in s) &&
        !("101" in (operation.responses ?? {})) &&
        (operation as Record<string, unknown>)["x-mcp-tool"] !== false,
    );
    const people = operations().filter(({ operation }) => operation.tags?.includes("Members"));
    expect(people.length).toBeGreaterThan(0);
    expect(people.every(({ operation }) => (operation as Record<string, unknown>)["x-mcp-tool"] === false)).toBe(true);
    expect(keyOperations.length).toBeGreaterThan(70);
    expect(tools.map((tool) => tool.definition.name)).toEqual(keyOperations.map((o) => o.operation.operationId));
    for (const { path, method, operation } of keyOperations) {
      const tool = byName(operation.operationId as string);
      expect(tool.binding, operation.operationId).toMatchObject({ method: method.toUpperCase(), path });
      expect(tool.definition.title).toBe(operation.summary);
      expect(tool.definition.description).toContain(operation.description);
    }
    expect(tools.map((tool) => tool.definition.name)).not.toContain("downloadReportRunFile");
    expect(tools.map((tool) => tool.definition.name)).not.toContain("tailRequests");
  });

  it("tool names are unique, at most 64 characters, of the characters MCP allows", () => {
    const names = tools.map((tool) => tool.definition.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(TOOL_NAME);
  });

  it("every input schema is a self-contained JSON Schema 2020-12 object that a strict validator compiles", () => {
    // Strict mode refuses keywords JSON Schema does not define, such as OpenAPI's `example` and `discriminator`.
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
    for (const { definition } of tools) {
      const schema = definition.inputSchema;
      expect(schema, definition.name).toMatchObject({ type: "object", additionalProperties: false });
      expect(JSON.stringify(schema), definition.name).not.toContain('"$ref"');
      expect(() => ajv.compile(schema), definition.name).not.toThrow();
    }
  });

  it("an operation's example request is a valid input of its tool", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const subuser = ajv.compile(byName("createSubuser").definition.inputSchema);
    expect(subuser({ label: "scraper-eu-1", products: ["residential"] })).toBe(true);
    expect(subuser({ label: "scraper-eu-1" })).toBe(false);
    expect(subuser({ label: "scraper-eu-1", products: ["residential"], surprise: 1 })).toBe(false);
    const update = ajv.compile(byName("updateSubuser").definition.inputSchema);
    expect(update({ id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", rps_max: 10, idempotency_key: "k1" })).toBe(true);
    expect(update({ rps_max: 10 })).toBe(false);
  });

  it("path, query and header parameters are arguments; a body of one shape is spread, a union is the `body` argument", () => {
    expect(byName("listSubusers").binding).toMatchObject({
      pathArguments: [],
      queryArguments: ["cursor", "limit", "product", "status", "label_contains", "ids"],
      body: "none",
      idempotencyArgument: null,
    });
    expect(byName("updateSubuser").binding).toMatchObject({
      pathArguments: ["id"],
      headerArguments: { idempotency_key: "Idempotency-Key" },
      body: "flat",
    });
    expect(byName("createApiKey").binding.headerArguments).toEqual({
      idempotency_key: "Idempotency-Key",
      mfa_code: "X-MFA-Code",
    });
    const order = byName("createOrder");
    expect(order.binding.body).toBe("nested");
    expect(order.definition.inputSchema.required).toEqual(["body"]);
    const body = (order.definition.inputSchema.properties as Record<string, any>).body;
    expect(body.oneOf).toHaveLength(2);
    expect(body).not.toHaveProperty("discriminator");
  });

  it("every write takes an idempotency_key; a GET or an operation of a read scope is annotated read-only", () => {
    for (const tool of tools) {
      const { method } = tool.binding;
      const { annotations, inputSchema } = tool.definition;
      const properties = inputSchema.properties as Record<string, unknown>;
      if (method !== "GET") expect(properties, tool.definition.name).toHaveProperty("idempotency_key");
      expect(annotations.readOnlyHint, tool.definition.name).toBe(method === "GET" || tool.scope?.access === "read");
    }
    // A quote is a POST that changes nothing: billing:read, read-only.
    expect(byName("quoteOrder").definition.annotations.readOnlyHint).toBe(true);
    expect(byName("createSubuser").definition.annotations).toMatchObject({ destructiveHint: false });
    expect(byName("deleteSubuser").definition.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(byName("rotateSubuserPassword").definition.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: false,
    });
    // A PUT replaces the budget whole: repeating it changes nothing more.
    expect(byName("setBudget").definition.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
  });

  it("the test helpers are marked sandbox-only, and only they are", () => {
    const sandboxOnly = tools.filter((tool) => tool.sandboxOnly).map((tool) => tool.definition.name);
    expect(sandboxOnly.sort()).toEqual(
      tools
        .filter((tool) => tool.binding.path.startsWith("/test-helpers/"))
        .map((tool) => tool.definition.name)
        .sort(),
    );
    expect(sandboxOnly).toHaveLength(5);
  });

  it("the tools are built once per document", () => {
    expect(toolsOf(document)).toBe(tools);
  });
});
