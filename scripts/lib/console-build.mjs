// The console (console/ → public/console/): esbuild bundles its TypeScript (Preact, uPlot and the typed client)
// into one minified script and one stylesheet, next to its index.html. Like the docs assets, a file is written only
// when its content changed, so a `wrangler dev` serving this checkout is not reloaded by a build that changed nothing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..", "..");
const source = path.join(root, "console");
export const consoleOutput = path.join(root, "public", "console");

/** Builds the console; answers the files written and the gzip size of its JavaScript. */
export async function buildConsole() {
  const result = await build({
    entryPoints: { console: path.join(source, "src", "main.tsx") },
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: consoleOutput,
    write: false,
    legalComments: "none",
    logLevel: "warning",
  });
  const files = [
    ...result.outputFiles.map((file) => ({ name: path.basename(file.path), contents: Buffer.from(file.contents) })),
    { name: "index.html", contents: readFileSync(path.join(source, "index.html")) },
  ];
  mkdirSync(consoleOutput, { recursive: true });
  const written = files.filter(({ name, contents }) => writeIfChanged(path.join(consoleOutput, name), contents));
  const javascript = files.filter(({ name }) => name.endsWith(".js"));
  const gzipBytes = javascript.reduce((sum, { contents }) => sum + gzipSync(contents, { level: 9 }).length, 0);
  return { written: written.map(({ name }) => name), gzipBytes };
}

function writeIfChanged(file, contents) {
  if (existsSync(file) && readFileSync(file).equals(contents)) return false;
  writeFileSync(file, contents);
  return true;
}
