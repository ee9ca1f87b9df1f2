import {
  BOUND_KEYS_EXTENSION,
  KEY_SCOPE_EXTENSION,
  SANDBOX_ONLY_EXTENSION,
} from "../../src/platform/route-definitions";
import { call, json } from "./http";

/** The public OpenAPI document's operations, read at run time: the walks call every one, a route added later too. */

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { example?: unknown; enum?: string[] };
}

export interface Operation {
  id: string;
  method: string;
  /** The path as called, with the server's base (`/v1/subusers/{id}`). */
  path: string;
  /** `area:access`, `any`, or undefined for an operation authorized otherwise (a signed link). */
  scope: string | undefined;
  sandboxOnly: boolean;
  /** Open by design, with no credential (`security: []`): sign-in, accepting an invitation, password resets. */
  open: boolean;
  /** Open to keys bound to sub-users (`x-bound-keys`). */
  boundKeys: boolean;
  parameters: Parameter[];
  hasBody: boolean;
  /** The request body's example (the schema's own or its component's); a `oneOf` body has none. */
  example: unknown;
  statuses: string[];
}

const HTTP_METHODS = new Set(["get", "put", "post", "patch", "delete"]);

export async function publicOperations(): Promise<Operation[]> {
  const document = await json(await call("GET", "/v1/openapi.json"));
  const base = new URL(document.servers[0].url).pathname.replace(/\/$/, "");
  const component = (schema: any) =>
    schema?.$ref ? document.components.schemas[String(schema.$ref).split("/").pop() as string] : schema;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      operations.push({
        id: operation.operationId,
        method,
        path: `${base}${path}`,
        scope: operation[KEY_SCOPE_EXTENSION],
        sandboxOnly: operation[SANDBOX_ONLY_EXTENSION] === true,
        open: Array.isArray(operation.security) && operation.security.length === 0,
        boundKeys: operation[BOUND_KEYS_EXTENSION] === true,
        parameters: operation.parameters ?? [],
        hasBody: schema !== undefined,
        example: schema?.example ?? component(schema)?.example,
        statuses: Object.keys(operation.responses ?? {}),
      });
    }
  }
  return operations;
}
