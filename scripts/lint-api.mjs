// `npm run lint:api`: the OpenAPI documents as the worker serves them (over HTTPS, as in production), checked by
// outside tools: Spectral (spectral:oas + the OWASP API Security ruleset) and Redocly (recommended rules).
// Both documents must come out without errors or warnings.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureDevVars, getInsecure, root, startWorker } from "./lib/local-worker.mjs";

const require = createRequire(import.meta.url);
const bin = (pkg, file) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
const PORT = 8797;

const vars = ensureDevVars();
const state = mkdtempSync(path.join(tmpdir(), "lint-api-"));
const out = path.join(root, ".wrangler", "openapi");
mkdirSync(out, { recursive: true });

const { child, base } = await startWorker(PORT, { quiet: true, https: true, persistTo: state });
const documents = [
  { name: "public", url: `${base}/v1/openapi.json`, ruleset: ".spectral.yaml" },
  { name: "internal", url: `${base}/internal/openapi.json`, ruleset: ".spectral-internal.yaml" },
];
try {
  for (const document of documents) {
    const response = await getInsecure(document.url, { Authorization: `Bearer ${vars.ADMIN_TOKEN}` });
    if (!response.ok) throw new Error(`GET ${document.url}: ${response.status}`);
    document.file = path.join(out, `${document.name}.json`);
    writeFileSync(document.file, response.text());
  }
} finally {
  child.kill("SIGTERM");
  rmSync(state, { recursive: true, force: true });
}

let failed = false;
const run = (label, args) => {
  console.log(`\n── ${label}`);
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) failed = true;
};
for (const document of documents) {
  const relative = path.relative(root, document.file);
  run(`Spectral (${document.ruleset}) ${relative}`, [
    bin("@stoplight/spectral-cli", "dist/index.js"),
    "lint",
    "--ruleset",
    document.ruleset,
    "--fail-severity",
    "warn",
    relative,
  ]);
  run(`Redocly (recommended) ${relative}`, [
    bin("@redocly/cli", "bin/cli.js"),
    "lint",
    "--config",
    "redocly.yaml",
    "--max-problems",
    "50",
    relative,
  ]);
}
if (failed) {
  console.error("\nlint:api failed: see the problems above.");
  process.exit(1);
}
console.log("\nlint:api: both documents are clean.");
