import type { OpenApiDocument } from "../api-docs/document";
import { isPlainObject } from "../platform/json";
import {
  ANY_KEY_SCOPE,
  BOUND_KEYS_EXTENSION,
  KEY_SCOPE_EXTENSION,
  MCP_TOOL_EXTENSION,
  SANDBOX_ONLY_EXTENSION,
} from "../platform/route-definitions";
import { type KeyAccess, type KeyArea, type KeyScopes, keyAccesses, keyAreas, scopeAllows } from "../vocabulary";

/**
 * One MCP tool per operation of the public OpenAPI document, generated from it: the name is the operationId, the
 * title the summary, the description the summary and description (which name the key scope), and the input schema
 * the operation's path, query and header parameters and its JSON body. Operations a key cannot authorize (a signed
 * download link, a member's own sign-in) have no tool, nor have WebSockets (a live tail), nor operations marked
 * `x-mcp-tool: false` (the account's people: an assistant does not invite or remove them).
 */

type Schema = Record<string, unknown>;

/** What `tools/list` shows of a tool. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
  };
}

/** How a call's arguments become the operation's HTTP request. */
export interface OperationBinding {
  method: string;
  /** The path template under the version's server URL, e.g. `/subusers/{id}`. */
  path: string;
  pathArguments: string[];
  queryArguments: string[];
  /** Argument → request header (`idempotency_key` → `Idempotency-Key`). */
  headerArguments: Record<string, string>;
  /** The argument the `Idempotency-Key` comes from, on operations that take one. */
  idempotencyArgument: string | null;
  /** `flat`: the body's properties are arguments; `nested`: the body is the `body` argument. */
  body: "none" | "flat" | "nested";
}

export interface Tool {
  definition: ToolDefinition;
  binding: OperationBinding;
  /** null: open to any key (an operation about the key itself or the service). */
  scope: { area: KeyArea; access: KeyAccess } | null;
  sandboxOnly: boolean;
  /** Open to keys bound to sub-users (`x-bound-keys`). */
  boundKeys: boolean;
}

/** The argument a body that cannot be spread into arguments (a union of shapes) is passed as. */
export const BODY_ARGUMENT = "body";
const HTTP_METHODS = ["get", "put", "post", "delete", "patch"] as const;
const IDEMPOTENCY_HEADER = "idempotency-key";

const toolsByDocument = new WeakMap<OpenApiDocument, Tool[]>();

/** The document's tools, in its order (a stable order lets clients cache the list); built once per document. */
export function toolsOf(document: OpenApiDocument): Tool[] {
  let tools = toolsByDocument.get(document);
  if (!tools) {
    tools = buildTools(document);
    toolsByDocument.set(document, tools);
  }
  return tools;
}

/**
 * Whether a key sees a tool: its scopes allow the operation, a sandbox-only one needs a sandbox key, and a key bound
 * to sub-users sees only the operations open to it.
 */
export function isVisibleTo(
  tool: Tool,
  key: { scopes: KeyScopes | null; livemode: boolean; subuserIds: string[] | null },
): boolean {
  const allowed = tool.scope === null || scopeAllows(key.scopes, tool.scope.area, tool.scope.access);
  return allowed && !(tool.sandboxOnly && key.livemode) && (tool.boundKeys || key.subuserIds === null);
}

function buildTools(document: OpenApiDocument): Tool[] {
  const tools: Tool[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item?.[method] as Schema | undefined;
      if (
        operation &&
        keyScopeOf(operation) !== undefined &&
        !isWebSocket(operation) &&
        operation[MCP_TOOL_EXTENSION] !== false
      ) {
        tools.push(toolOf(document, method, path, operation));
      }
    }
  }
  return tools;
}

/** A WebSocket (a live tail): a stream, where a tool call gets one answer. */
function isWebSocket(operation: Schema): boolean {
  return "101" in ((operation.responses as Schema | undefined) ?? {});
}

/** The scope an operation declares: null for any key, undefined for an operation not authorized by an API key. */
function keyScopeOf(operation: Schema): Tool["scope"] | undefined {
  const declared = operation[KEY_SCOPE_EXTENSION];
  if (typeof declared !== "string") return undefined;
  if (declared === ANY_KEY_SCOPE) return null;
  const [area, access] = declared.split(":") as [KeyArea, KeyAccess];
  if (!keyAreas.includes(area) || !keyAccesses.includes(access)) throw new Error(`unknown key scope ${declared}`);
  return { area, access };
}

function toolOf(document: OpenApiDocument, method: string, path: string, operation: Schema): Tool {
  const name = operation.operationId as string;
  const summary = (operation.summary as string | undefined) ?? name;
  const scope = keyScopeOf(operation) as Tool["scope"];
  const input = new InputSchema(name);
  const binding: OperationBinding = {
    method: method.toUpperCase(),
    path,
    pathArguments: [],
    queryArguments: [],
    headerArguments: {},
    idempotencyArgument: null,
    body: "none",
  };

  for (const parameter of ((operation.parameters as Schema[] | undefined) ?? []).map((p) => resolve(document, p))) {
    const where = parameter.in as string;
    const header = parameter.name as string;
    const argument = where === "header" ? argumentForHeader(header) : header;
    const schema = { ...toJsonSchema(document, parameter.schema as Schema) };
    if (parameter.description) schema.description = parameter.description;
    if (where === "path") binding.pathArguments.push(argument);
    else if (where === "query") binding.queryArguments.push(argument);
    else if (where === "header") binding.headerArguments[argument] = header;
    else continue;
    if (header.toLowerCase() === IDEMPOTENCY_HEADER) {
      binding.idempotencyArgument = argument;
      schema.description =
        `${schema.description ?? ""} Generated when absent; the result names the key used.`.trimStart();
    }
    input.add(argument, schema, parameter.required === true);
  }

  const requestBody = operation.requestBody ? resolve(document, operation.requestBody as Schema) : null;
  const bodySchema = (requestBody?.content as Schema | undefined)?.["application/json"] as Schema | undefined;
  if (requestBody && bodySchema?.schema) {
    const schema = toJsonSchema(document, bodySchema.schema as Schema);
    const required = requestBody.required === true;
    if (isSpreadable(schema, input)) {
      binding.body = "flat";
      const requiredFields = new Set((schema.required as string[] | undefined) ?? []);
      for (const [field, fieldSchema] of Object.entries(schema.properties as Record<string, Schema>)) {
        input.add(field, fieldSchema, required && requiredFields.has(field));
      }
    } else {
      binding.body = "nested";
      input.add(BODY_ARGUMENT, { description: "The request body.", ...schema }, required);
    }
  }

  // Safe methods change nothing, and neither does an operation a read scope authorizes (a quote). A GET may still
  // need a write scope (a batch's IP list shows its password): that decides who sees it, not what it does.
  const readOnly = method === "get" || scope?.access === "read";
  const creates =
    method === "post" && Object.keys(operation.responses as Schema).some((s) => s === "201" || s === "202");
  return {
    definition: {
      name,
      title: summary,
      description: [summary, operation.description].filter(Boolean).join("\n\n"),
      inputSchema: input.schema(),
      annotations: {
        title: summary,
        readOnlyHint: readOnly,
        // Writes: a creation only adds; an update, a deletion or an action may change what exists. Deleting or
        // updating again with the same arguments changes nothing more.
        ...(readOnly ? {} : { destructiveHint: !creates, idempotentHint: ["delete", "patch", "put"].includes(method) }),
      },
    },
    binding,
    scope,
    sandboxOnly: operation[SANDBOX_ONLY_EXTENSION] === true,
    boundKeys: operation[BOUND_KEYS_EXTENSION] === true,
  };
}

/** `Idempotency-Key` → `idempotency_key`, `X-MFA-Code` → `mfa_code`. */
function argumentForHeader(header: string): string {
  return header
    .replace(/^x-/i, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_");
}

/** A body of one object shape whose properties collide with no other argument is spread into the arguments. */
function isSpreadable(schema: Schema, input: InputSchema): boolean {
  if (schema.type !== "object" || !isPlainObject(schema.properties)) return false;
  if (["anyOf", "oneOf", "allOf", "not", "if"].some((keyword) => keyword in schema)) return false;
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return false;
  return Object.keys(schema.properties).every((field) => !input.has(field) && field !== BODY_ARGUMENT);
}

/** The tool's input: an object of named arguments, nothing else. */
class InputSchema {
  private readonly properties: Record<string, Schema> = {};
  private readonly required: string[] = [];
  private readonly tool: string;

  constructor(tool: string) {
    this.tool = tool;
  }

  has(name: string): boolean {
    return name in this.properties;
  }

  add(name: string, schema: Schema, required: boolean): void {
    if (this.has(name)) throw new Error(`${this.tool}: two arguments named ${name}`);
    this.properties[name] = schema;
    if (required) this.required.push(name);
  }

  schema(): Schema {
    return {
      type: "object",
      properties: this.properties,
      ...(this.required.length > 0 ? { required: this.required } : {}),
      additionalProperties: false,
    };
  }
}

// ── OpenAPI 3.1 schemas → self-contained JSON Schema 2020-12 ──────────────────────────────────────────

/** Keywords whose value is a schema, a list of schemas, or a map of them. */
const SCHEMA_KEYWORDS = [
  "items",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "propertyNames",
  "contains",
  "not",
  "if",
  "then",
  "else",
];
const SCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SCHEMA_MAP_KEYWORDS = ["properties", "patternProperties", "dependentSchemas", "$defs"];
/** OpenAPI's own keywords, which JSON Schema does not know. */
const OPENAPI_KEYWORDS = new Set(["discriminator", "xml", "externalDocs", "example"]);

/**
 * A schema of the document with every `$ref` inlined (a tool's input schema stands alone) and OpenAPI's keywords
 * turned into JSON Schema's: `example` becomes `examples`; `discriminator`, `xml` and `externalDocs` go.
 */
function toJsonSchema(document: OpenApiDocument, schema: Schema, seen: ReadonlySet<string> = new Set()): Schema {
  if (typeof schema.$ref === "string") {
    if (seen.has(schema.$ref)) throw new Error(`recursive schema ${schema.$ref}: tools need self-contained schemas`);
    const { $ref, ...siblings } = schema;
    const target = toJsonSchema(document, resolve(document, { $ref }), new Set([...seen, $ref]));
    return { ...target, ...toJsonSchema(document, siblings, seen) };
  }
  const converted: Schema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (OPENAPI_KEYWORDS.has(keyword)) continue;
    if (SCHEMA_KEYWORDS.includes(keyword) && isPlainObject(value)) {
      converted[keyword] = toJsonSchema(document, value, seen);
    } else if (SCHEMA_LIST_KEYWORDS.includes(keyword) && Array.isArray(value)) {
      converted[keyword] = value.map((entry: Schema) => toJsonSchema(document, entry, seen));
    } else if (SCHEMA_MAP_KEYWORDS.includes(keyword) && isPlainObject(value)) {
      converted[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, entry]) => [name, toJsonSchema(document, entry as Schema, seen)]),
      );
    } else {
      converted[keyword] = value;
    }
  }
  if ("example" in schema && !("examples" in schema)) converted.examples = [schema.example];
  return converted;
}

/** A `#/components/…` reference's target (anything else is returned as it is). */
function resolve(document: OpenApiDocument, node: Schema): Schema {
  const ref = node.$ref;
  if (typeof ref !== "string") return node;
  if (!ref.startsWith("#/")) throw new Error(`only local references are supported: ${ref}`);
  let target: unknown = document;
  for (const segment of ref.slice(2).split("/")) {
    target = (target as Schema | undefined)?.[segment.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  if (!isPlainObject(target)) throw new Error(`unresolved reference ${ref}`);
  return resolve(document, target);
}
