import { errorCodesMarkdown } from "../api-docs/error-page";
import type { BuiltVersion } from "../api-versions";

/**
 * The documentation a model may read beside the tools: the error codes (the content of `/docs/errors`, in Markdown)
 * and the version's OpenAPI document (what `/<version>/openapi.json` serves), generated on demand from the same
 * sources as the pages.
 */
export interface DocumentResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  read: (origin: string) => string;
}

export function documentResources(version: BuiltVersion): DocumentResource[] {
  return [
    {
      uri: "docs://errors",
      name: "errors",
      title: "Error codes",
      description:
        "Every error code the API and its tools answer with: its HTTP status, its cause and how to fix it (the " +
        "page each error's doc_url points into).",
      mimeType: "text/markdown",
      read: errorCodesMarkdown,
    },
    {
      uri: `docs://openapi/${version.name}`,
      name: `openapi-${version.name}`,
      title: `OpenAPI document (${version.name})`,
      description:
        `The OpenAPI 3.1 description of the API's ${version.name} operations, which the tools are generated from: ` +
        "every schema, parameter, response and error.",
      mimeType: "application/json",
      read: (origin) => JSON.stringify(version.document(origin)),
    },
  ];
}
