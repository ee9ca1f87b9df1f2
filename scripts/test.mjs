// `npm test`: the static assets (docs assets, the console's build); the local gateway's tests against `wrangler dev`
// (node --test), alone: they time a node's decisions and its bursts; then vitest inside workerd (extra arguments go to
// vitest, e.g. CI's reporters) and, beside it, the console in Chromium against `wrangler dev`, the deploy script and
// wrangler.toml's environments, and a short run of the fleet simulation. The two lines share the machine's cores:
// vitest's workers, and the other line's server and browser. The other line's output is printed as each step ends.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
/** The `node --test` files in `dir`, by their ending (the gateway's are TypeScript, run as they are). */
const nodeTests = (dir, ending) =>
  readdirSync(path.join(root, dir))
    .filter((file) => file.endsWith(ending))
    .map((file) => path.join(dir, file));

const first = [
  ["scripts/docs-assets.mjs"],
  ["--test", "--test-concurrency=1", ...nodeTests(path.join("gateway", "test"), ".test.ts")],
];
const beside = [
  [
    "--test",
    "--test-concurrency=1",
    "console/test/browser.test.mjs",
    "console/test/members.test.mjs",
    "console/test/security.test.mjs",
  ],
  // The deploy script against a stand-in wrangler, and wrangler.toml's environments (no network).
  ["--test", ...nodeTests(path.join("scripts", "test"), ".test.mjs")],
  // The fleet simulation (docs/scale.md), short: the scale model still runs on the code as it is.
  ["bench/scale.mjs", "--short"],
];

for (const args of first) {
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", cwd: root });
  if (status !== 0) process.exit(status ?? 1);
}

const [vitest, others] = await Promise.all([
  run(["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)], { inherit: true }),
  runInTurn(beside),
]);
process.exit(vitest !== 0 ? vitest : others);

/** Runs each step after the last, its output held and printed when it ends; the first failure's status, or 0. */
async function runInTurn(steps) {
  for (const args of steps) {
    const status = await run(args, { inherit: false });
    if (status !== 0) return status;
  }
  return 0;
}

/** Runs `node args`; resolves with its exit status. Held output is printed at once when the step ends. */
function run(args, { inherit }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: inherit ? "inherit" : "pipe" });
    const held = [];
    child.stdout?.on("data", (chunk) => held.push(chunk));
    child.stderr?.on("data", (chunk) => held.push(chunk));
    child.on("close", (code) => {
      if (!inherit) process.stdout.write(Buffer.concat(held));
      resolve(code ?? 1);
    });
  });
}
