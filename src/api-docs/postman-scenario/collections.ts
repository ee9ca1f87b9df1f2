/**
 * The build's entry (`scripts/lib/postman-build.mjs` bundles it for Node): every API version's Postman collection,
 * as the file the Worker serves, generated from the version's OpenAPI document and the scenario.
 */
import { API_VERSIONS, buildVersion } from "../../api-versions";
import { postmanCollection } from "../postman";
import { BUILT_ORIGIN, collectionPath } from "../postman-asset";

/** Each version's collection: its path under `public/` and its text. `scriptFunctions`: see `postmanCollection`. */
export function builtCollections(scriptFunctions: string): Array<{ path: string; text: string }> {
  return API_VERSIONS.map((version) => {
    const document = buildVersion(version).document(BUILT_ORIGIN);
    const collection = postmanCollection(document, `${BUILT_ORIGIN}/${version.name}`, scriptFunctions);
    const text = JSON.stringify(collection);
    // The Worker replaces the first occurrence only: it must be the `baseUrl` variable's, and the only one.
    if (text.split(BUILT_ORIGIN).length !== 2) {
      throw new Error(`Postman collection of ${version.name}: ${BUILT_ORIGIN} must appear once, in its baseUrl`);
    }
    return { path: collectionPath(version.name), text };
  });
}
