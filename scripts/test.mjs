// `npm test`: the static assets (docs assets, the console's build), then vitest inside workerd (extra arguments go to
// vitest, e.g. CI's reporters), then the local gateway's tests against `wrangler dev` (node --test), the console in
// Chromium against `wrangler dev` and the gateway (node --test), then a short run of the fleet simulation.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const gatewayTests = readdirSync(path.join(root, "gateway", "test"))
  .filter((file) => file.endsWith(".test.mjs"))
  .map((file) => path.join("gateway", "test", file));
const steps = [
  ["scripts/docs-assets.mjs"],
  ["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)],
  ["--test", "--test-concurrency=1", ...gatewayTests],
  ["--test", "console/test/browser.test.mjs"],
  // The fleet simulation (docs/scale.md), short: the scale model still runs on the code as it is.
  ["bench/scale.mjs", "--short"],
];
for (const args of steps) {
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", cwd: root });
  if (status !== 0) process.exit(status ?? 1);
}
