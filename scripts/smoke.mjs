// `npm run smoke -- <base-url> <api-key>`: the API's Postman scenario, end to end through newman, against any
// deployment (the collection comes from <base-url>/v1/postman/collection.json). Exits 1 on any failed assertion.
//
//   npm run smoke -- https://api.example.com test_…           a sandbox key: simulated money, costs nothing
//   npm run smoke -- https://api.example.com live_… --live    a live key: buys a 5-IP ISP batch ($30) and renews it
//   npm run smoke                                             `npm run dev` on :8787, with its sandbox key
//   npm run postman                                           `npm run dev` on :8787, with the demo account's live key
//
// Without a key it takes API_KEY, or the key `npm run dev` keeps in .wrangler/ (demo-sandbox.json, or
// demo-account.json with --live). A deployment without a proxy gateway beside it skips the proxy test's checks
// ("no gateway reachable") instead of failing them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";

const require = createRequire(import.meta.url);
const newman = require("newman");

const { values: options, positionals } = parseArgs({
  options: { live: { type: "boolean", default: false } },
  allowPositionals: true,
});
const origin = (positionals[0] ?? "http://localhost:8787").replace(/\/+$/, "").replace(/\/v1$/, "");
const apiKey =
  positionals[1] ?? process.env.API_KEY ?? localKey(options.live ? "demo-account.json" : "demo-sandbox.json");

if (apiKey.startsWith("live_") && !options.live) {
  console.error(
    "That is a live key: the scenario spends real money with it (a 5-IP ISP order, $30, and its renewal).\n" +
      "Use a sandbox key (test_…), or pass --live to run on the live key anyway.",
  );
  process.exit(2);
}

const response = await fetch(`${origin}/v1/postman/collection.json`);
if (!response.ok) throw new Error(`GET /v1/postman/collection.json: ${response.status} ${await response.text()}`);
const collection = await response.json();

newman.run({ collection, envVar: [{ key: "api_key", value: apiKey }], reporters: ["cli"] }, (error, summary) => {
  if (error) throw error;
  const assertions = summary.run.executions.flatMap((execution) => execution.assertions ?? []);
  const skipped = assertions.filter((assertion) => assertion.skipped);
  const failed = summary.run.failures.length;
  console.log(
    `smoke (${apiKey.startsWith("test_") ? "sandbox" : "live"} key, ${origin}): ${assertions.length - skipped.length - failed} passed, ${failed} failed, ${skipped.length} skipped`,
  );
  for (const assertion of skipped) console.log(`  skipped: ${assertion.assertion}`);
  process.exitCode = failed > 0 || summary.run.stats.requests.failed > 0 ? 1 : 0;
});

/** The key `npm run dev` keeps for its demo account or that account's sandbox. */
function localKey(file) {
  const saved = path.join(import.meta.dirname, "..", ".wrangler", file);
  try {
    return JSON.parse(readFileSync(saved, "utf8")).token;
  } catch {
    console.error(`No API key given, and none from \`npm run dev\` in ${path.relative(process.cwd(), saved)}.`);
    process.exit(2);
  }
}
