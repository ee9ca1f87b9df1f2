// Bench scripts run the project's TypeScript in plain node: bundled by esbuild into a temporary module, imported,
// and removed.
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/** Bundles `entry` (a path from the repository root) and imports it; `options` are esbuild's, added. */
export async function importBundled(root, entry, options = {}) {
  const out = path.join(tmpdir(), `${path.basename(entry, ".ts")}-${process.pid}.mjs`);
  await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: out,
    logLevel: "error",
    ...options,
  });
  const module = await import(pathToFileURL(out).href);
  rmSync(out, { force: true });
  return module;
}
