// The package mirror on our build machines lacks some other-platform binaries (e.g. Biome for Android,
// workerd for macOS/Windows at current versions), so `npm install` here writes a lock without them and
// `npm ci` then refuses it as out of sync. This restores their lock entries (optional, with os/cpu), which
// npm skips on Linux and installs from the public registry elsewhere. Run after `npm install` changes the lock.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const lockPath = path.join(import.meta.dirname, "..", "package-lock.json");
const lock = JSON.parse(readFileSync(lockPath, "utf8"));

const platforms = {
  "@biomejs/cli-android-arm64": { os: ["android"], cpu: ["arm64"] },
  "@biomejs/cli-android-x64": { os: ["android"], cpu: ["x64"] },
  "@biomejs/cli-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "@biomejs/cli-darwin-x64": { os: ["darwin"], cpu: ["x64"] },
  "@biomejs/cli-linux-arm64-musl": { os: ["linux"], cpu: ["arm64"], libc: ["musl"] },
  "@biomejs/cli-linux-x64-musl": { os: ["linux"], cpu: ["x64"], libc: ["musl"] },
  "@biomejs/cli-win32-arm64": { os: ["win32"], cpu: ["arm64"] },
  "@biomejs/cli-win32-x64": { os: ["win32"], cpu: ["x64"] },
  "@cloudflare/workerd-darwin-64": { os: ["darwin"], cpu: ["x64"] },
  "@cloudflare/workerd-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "@cloudflare/workerd-windows-64": { os: ["win32"], cpu: ["x64"] },
};

let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const platform = platforms[name];
    if (!platform) continue;
    // npm resolves a dependency from the nearest node_modules up the tree; put it beside the parent's.
    const parentDir = location.slice(0, location.lastIndexOf("node_modules/"));
    const target = `${parentDir}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    const existing = lock.packages[target] ?? lock.packages[hoisted];
    if (existing && existing.version === version) continue;
    const key = lock.packages[hoisted] ? target : hoisted;
    lock.packages[key] = { version, ...platform, dev: entry.dev, optional: true };
    added++;
  }
}

writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} platform entries restored`);
