// `npm run check:bundle` (CI runs it): what a deploy would meet on the platform, checked offline.
//
//   - `wrangler deploy --dry-run` of production and staging: wrangler.toml as a deploy reads it, bundled, and the
//     bundle's gzip size against BUNDLE_BUDGET_BYTES (the platform refuses 3 MB on the free plan, 10 MB paid; our
//     budget keeps cold starts short); and none of BUILD_ONLY's modules in it (their work is done by the build step)
//   - `wrangler check startup`: the worker's startup (parse and global scope), profiled in local workerd, against
//     the platform's 1 s startup limit. The profile runs on this machine's CPU, not Cloudflare's: a figure to watch
//     for growth, not the production number.
//
// Prints the figures; exits 1 when one is over its budget.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWrangler } from "./lib/wrangler-cli.mjs";

const BUNDLE_BUDGET_BYTES = 1_000_000;
const STARTUP_LIMIT_MS = 1_000;
/** Modules only the assets' build runs (the Postman collection's generator and scenario): never in the worker. */
const BUILD_ONLY = ["src/api-docs/postman.ts", "src/api-docs/postman-scenario/"];
const KB = (bytes) => `${Math.round(bytes / 1000).toLocaleString("en-US")} KB`;

const scratch = mkdtempSync(path.join(tmpdir(), "check-bundle-"));
const problems = [];
try {
  for (const env of ["", "staging"]) {
    const label = env || "production";
    const dry = wrangler(["deploy", "--dry-run", `--env=${env}`, "--outdir", path.join(scratch, label)]);
    const [, raw, gzip] = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(dry.output) ?? fail(dry, "no size");
    const gzipBytes = Number(gzip) * 1024;
    console.log(
      `bundle (${label}): ${KB(Number(raw) * 1024)}, ${KB(gzipBytes)} gzip (budget ${KB(BUNDLE_BUDGET_BYTES)})`,
    );
    if (gzipBytes > BUNDLE_BUDGET_BYTES) problems.push(`the ${label} bundle is over its budget`);
    // esbuild heads each module of an unminified bundle with a comment naming it.
    const bundle = readFileSync(path.join(scratch, label, "index.js"), "utf8");
    const buildOnly = BUILD_ONLY.filter((module) => bundle.includes(`\n// ${module}`));
    console.log(`build-time modules in the ${label} bundle: ${buildOnly.join(", ") || "none"}`);
    if (buildOnly.length > 0) problems.push(`the ${label} bundle holds modules only the build may run`);
  }

  const startup = wrangler(["check", "startup", "--env=", "--outfile", path.join(scratch, "startup.cpuprofile")]);
  const active = /Active: ([\d.]+) ms/.exec(startup.output)?.[1] ?? fail(startup, "no startup figure");
  const window = /Profile window: ([\d.]+) ms/.exec(startup.output)?.[1];
  console.log(`startup: ${active} ms of CPU in a ${window} ms local profile (platform limit ${STARTUP_LIMIT_MS} ms)`);
  if (Number(active) > STARTUP_LIMIT_MS) problems.push("the worker's startup is over the platform's limit");
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
for (const problem of problems) console.error(`✗ ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);

function wrangler(args) {
  const result = runWrangler(args, { capture: true });
  if (!result.ok) fail(result, "it failed");
  return result;
}

function fail(result, why) {
  rmSync(scratch, { recursive: true, force: true });
  console.error(result.output.trim());
  console.error(`✗ wrangler: ${why}`);
  process.exit(1);
}
