// `npm test`: the static assets (docs assets, the console's build), then vitest inside workerd (extra arguments go to
// vitest, e.g. CI's reporters), then the local gateway's tests against `wrangler dev` (node --test), the console in
// Chromium against `wrangler dev` and the gateway, the deploy script and wrangler.toml's environments (node --test),
// then a short run of the fleet simulation.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const nodeTests = (dir) =>
  readdirSync(path.join(root, dir))
    .filter((file) => file.endsWith(".test.mjs"))
    .map((file) => path.join(dir, file));
const steps = [
  ["scripts/docs-assets.mjs"],
  ["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)],
  ["--test", "--test-concurrency=1", ...nodeTests(path.join("gateway", "test"))],
  ["--test", "console/test/browser.test.mjs"],
  // The deploy script against a stand-in wrangler, and wrangler.toml's environments (no network).
  ["--test", ...nodeTests(path.join("scripts", "test"))],
  // The fleet simulation (docs/scale.md), short: the scale model still runs on the code as it is.
  ["bench/scale.mjs", "--short"],
];
for (const args of steps) {
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", cwd: root });
  if (status !== 0) process.exit(status ?? 1);
}
