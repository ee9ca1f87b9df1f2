// Runs the API's Postman collection end to end with newman against a running server (`npm run dev` by default):
//
//   node scripts/postman.mjs [origin]        origin defaults to http://localhost:8787
//
// The API key is API_KEY, or the demo account's (.wrangler/demo-account.json, written by `npm run dev`).
// The collection needs no key to download; it runs with this one. Exits non-zero on any failure.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const newman = require("newman");

const origin = process.argv[2] ?? "http://localhost:8787";
const apiKey =
  process.env.API_KEY ??
  JSON.parse(readFileSync(path.join(import.meta.dirname, "..", ".wrangler", "demo-account.json"), "utf8")).token;

const response = await fetch(`${origin}/v1/postman/collection.json`);
if (!response.ok) throw new Error(`GET /v1/postman/collection.json: ${response.status} ${await response.text()}`);
const collection = await response.json();

newman.run({ collection, envVar: [{ key: "api_key", value: apiKey }], reporters: ["cli"] }, (error, summary) => {
  if (error) throw error;
  const failed = summary.run.failures.length > 0 || summary.run.stats.requests.failed > 0;
  process.exitCode = failed ? 1 : 0;
});
