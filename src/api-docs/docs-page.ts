/**
 * The docs page. Swagger UI's assets are served by this worker (Workers static assets,
 * copied from `swagger-ui-dist` by scripts/docs-assets.mjs), so the page works offline.
 */
export function docsPage(specUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Proxy Account API · v1</title>
  <link rel="stylesheet" href="/docs-assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/docs-assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: "#docs", deepLinking: true, persistAuthorization: true });
  </script>
</body>
</html>`;
}
