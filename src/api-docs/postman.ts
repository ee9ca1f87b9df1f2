type Operation = {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, unknown>>;
  requestBody?: { content?: Record<string, { schema?: { example?: unknown } }> };
};

interface Document {
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, { example?: unknown }> };
}

/**
 * A Postman v2.1 collection derived from the OpenAPI document (the single source):
 * one folder per tag, `{{base_url}}` and `{{api_key}}` as collection variables.
 */
export function postmanCollection(source: unknown, baseUrl: string) {
  const document = source as Document;
  const folders = new Map<string, unknown[]>();
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = operation.tags?.[0] ?? "Other";
      if (tag.startsWith("Internal")) continue;
      const folder = folders.get(tag) ?? [];
      folder.push(requestItem(document, path, method, operation));
      folders.set(tag, folder);
    }
  }
  return {
    info: {
      name: `${document.info.title} ${document.info.version}`,
      description: document.info.description,
      schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
    },
    auth: { type: "bearer", bearer: [{ key: "token", value: "{{api_key}}", type: "string" }] },
    variable: [
      { key: "base_url", value: baseUrl },
      { key: "api_key", value: "" },
    ],
    item: [...folders].map(([name, item]) => ({ name, item })),
  };
}

function requestItem(document: Document, path: string, method: string, operation: Operation) {
  const relative = path.replace(/^\/v1/, "").replace(/\{([^}]+)\}/g, ":$1");
  const example = exampleBody(document, operation);
  return {
    name: operation.summary ?? `${method.toUpperCase()} ${path}`,
    request: {
      method: method.toUpperCase(),
      description: operation.description,
      header: example === undefined ? [] : [{ key: "Content-Type", value: "application/json" }],
      url: {
        raw: `{{base_url}}${relative}`,
        host: ["{{base_url}}"],
        path: relative.split("/").filter(Boolean),
      },
      ...(example === undefined ? {} : { body: { mode: "raw", raw: JSON.stringify(example, null, 2) } }),
    },
  };
}

function exampleBody(document: Document, operation: Operation): unknown {
  const schema = operation.requestBody?.content?.["application/json"]?.schema as
    | { example?: unknown; $ref?: string }
    | undefined;
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  const name = schema.$ref?.split("/").pop();
  return (name && document.components?.schemas?.[name]?.example) ?? {};
}
