// The project's wrangler as a child process, for the scripts that drive it (dev, deploy, bundle checks).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
export const root = path.join(import.meta.dirname, "..", "..");

/** wrangler's entry point, or a stand-in that answers like it (WRANGLER_BIN: the deploy script's tests use one). */
export const wranglerBin =
  process.env.WRANGLER_BIN ?? path.join(path.dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");

/**
 * Runs `wrangler <args>` to its end with no terminal input (so it never prompts, and writes nothing back into
 * wrangler.toml). `capture`: return its output instead of showing it.
 */
export function runWrangler(args, { capture = false, env = {} } = {}) {
  const output = capture ? "pipe" : "inherit";
  const result = spawnSync(process.execPath, [wranglerBin, ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", output, output],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", ...env },
  });
  if (result.error) throw result.error;
  const stdout = result.stdout ?? "";
  const stderr = result.stderr ?? "";
  return { ok: result.status === 0, stdout, stderr, output: `${stdout}\n${stderr}` };
}
