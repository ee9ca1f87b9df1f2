// Copies Swagger UI's assets into public/docs-assets so the docs page is served by the worker itself
// (no CDN, works offline). Run by `npm run dev`, `npm test`, `npm run bench` and `npm run deploy`.
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const source = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const target = path.join(import.meta.dirname, "..", "public", "docs-assets");
mkdirSync(target, { recursive: true });
for (const file of ["swagger-ui.css", "swagger-ui-bundle.js"]) {
  copyFileSync(path.join(source, file), path.join(target, file));
}
