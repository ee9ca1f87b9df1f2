import { type ErrorCode, errorCatalogue, errorDocUrl } from "../platform/errors";

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[char] as string);

/** Inline code spans of the catalogue's Markdown-ish text. */
const render = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

const INTRODUCTION =
  "Every error is `{code, message, request_id, doc_url}`, with the HTTP status below; a refusal by a limit also " +
  "carries `limit`, `current` and `limit_raised_by`. The message may say more than the cause here (which field, " +
  "which limit).";

/** The catalogue's entries in the pages' order: by code. */
function catalogueByCode() {
  const entries = Object.entries(errorCatalogue) as Array<[ErrorCode, (typeof errorCatalogue)[ErrorCode]]>;
  return entries.sort(([a], [b]) => a.localeCompare(b));
}

/**
 * The page of error codes every error's `doc_url` points into: each code of the one catalogue with its status,
 * its cause and how to fix it, under an anchor named by the code. Plain HTML, no assets: it works offline.
 */
export function errorCodesPage(): string {
  const entries = catalogueByCode()
    .map(
      ([code, entry]) => `  <section id="${code}">
    <h2><a href="#${code}"><code>${code}</code></a> <span class="status">${entry.status}</span></h2>
    <p><strong>Cause.</strong> ${render(entry.message)}</p>
    <p><strong>Fix.</strong> ${render(entry.fix)}</p>
  </section>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Error codes · Proxy Account API</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1b1f24; }
    section { border-top: 1px solid #d8dee4; padding: .5rem 0; }
    section:target { background: #fff8c5; }
    h2 { font-size: 1.1rem; margin: .5rem 0; } h2 a { color: inherit; text-decoration: none; }
    .status { font-weight: normal; color: #57606a; }
    code { font-family: ui-monospace, monospace; font-size: .95em; }
  </style>
</head>
<body>
  <h1>Error codes</h1>
  <p>${render(INTRODUCTION)} The API reference is at <a href="/v1/docs">/v1/docs</a>.</p>
${entries}
</body>
</html>`;
}

/**
 * The same page in Markdown, for readers that are not browsers (the MCP server's `docs://errors` resource): each code
 * with its status, cause and fix, and where its entry is on the page (`doc_url`).
 */
export function errorCodesMarkdown(origin: string): string {
  const entries = catalogueByCode().map(
    ([code, entry]) =>
      `## \`${code}\` (${entry.status})\n\n**Cause.** ${entry.message}\n\n**Fix.** ${entry.fix}\n\n` +
      `doc_url: ${errorDocUrl(origin, code)}`,
  );
  return ["# Error codes", INTRODUCTION, ...entries].join("\n\n");
}
