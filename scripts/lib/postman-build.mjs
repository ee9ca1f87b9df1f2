// The Postman collections (src/api-docs/postman.ts → public/<version>/postman/collection.json), the file the worker
// serves for each API version. Generated in Node from the versions' OpenAPI documents and the scenario: esbuild
// bundles the build's entry (the API's routers included: Durable Object base classes and sockets inert here, where
// nothing runs them) and compiles the script functions to the text the collection's scripts hold. A scenario that
// does not place every operation fails here, never in the worker. Like the other assets, a file is written only when
// its content changed.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, transform } from "esbuild";

const root = path.join(import.meta.dirname, "..", "..");
const scenario = path.join(root, "src", "api-docs", "postman-scenario");

/** `cloudflare:workers` and `cloudflare:sockets`, as far as importing the routers needs them. */
const INERT_CLOUDFLARE = `
export class DurableObject {}
export class WorkerEntrypoint {}
export const env = {};
export function connect() { throw new Error("no sockets while building the Postman collection"); }
`;

/** Builds every version's collection; answers the paths (under public/) of the files written. */
export async function buildPostmanCollections() {
  const functions = await transform(readFileSync(path.join(scenario, "script-functions.ts"), "utf8"), {
    loader: "ts",
    target: "es2022",
  });
  const { builtCollections } = await importBundled(path.join(scenario, "collections.ts"));
  const written = [];
  for (const { path: served, text } of builtCollections(functions.code)) {
    const file = path.join(root, "public", ...served.split("/"));
    if (existsSync(file) && readFileSync(file, "utf8") === text) continue;
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    written.push(served);
  }
  return written;
}

async function importBundled(entry) {
  const scratch = mkdtempSync(path.join(tmpdir(), "postman-build-"));
  const outfile = path.join(scratch, "collections.mjs");
  try {
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      outfile,
      logLevel: "warning",
      plugins: [
        {
          name: "inert-cloudflare",
          setup(esbuild) {
            esbuild.onResolve({ filter: /^cloudflare:/ }, ({ path }) => ({ path, namespace: "inert-cloudflare" }));
            esbuild.onLoad({ filter: /.*/, namespace: "inert-cloudflare" }, () => ({ contents: INERT_CLOUDFLARE }));
          },
        },
      ],
    });
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
