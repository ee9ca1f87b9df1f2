// The worker's static assets: copies Swagger UI's assets into public/docs-assets so the docs page is served by the
// worker itself (no CDN, works offline), builds the console into public/console, and generates each API version's
// Postman collection into public/<version>/postman/. Run by `npm run dev`, `npm test`, `npm run bench` and
// `npm run deploy`, and by wrangler's build step on every `wrangler dev` start (and its rebuilds): a file is written
// only when its content changed, so a second `wrangler dev` serving the same checkout is not reloaded mid-request by
// the first one's start.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const source = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const target = path.join(import.meta.dirname, "..", "public", "docs-assets");
mkdirSync(target, { recursive: true });
for (const file of ["swagger-ui.css", "swagger-ui-bundle.js"]) {
  const from = path.join(source, file);
  const to = path.join(target, file);
  if (!existsSync(to) || !readFileSync(from).equals(readFileSync(to))) copyFileSync(from, to);
}

// The console's bundle: built here too, so every way of starting the worker serves a current one.
const { buildConsole } = await import("./lib/console-build.mjs");
const built = await buildConsole();
if (built.written.length > 0) {
  console.log(
    `console: ${built.written.join(", ")} written (JavaScript ${(built.gzipBytes / 1024).toFixed(1)} KB gzip)`,
  );
}

// The Postman collections: generated and checked here (every operation placed), served as they are written.
const { buildPostmanCollections } = await import("./lib/postman-build.mjs");
const collections = await buildPostmanCollections();
if (collections.length > 0) console.log(`postman: ${collections.join(", ")} written`);
