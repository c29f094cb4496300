/**
 * The /docs page: Swagger UI from the `swagger-ui-dist` package, served by the gateway itself, so
 * the page works without any other host (no CDN, and no call to the online spec validator).
 */
export const DOCS_ASSETS_PATH = "/docs/assets";

/**
 * The page shares its origin with the console, so a script injected into it (a crafted spec, a
 * hostile query string Swagger UI echoes) could act on an operator's console session: scripts run
 * only from the page's own files (Swagger UI's bundle and init.js, no inline script, no eval),
 * styles likewise, it calls only its own origin, and no page may frame it. data: images are
 * Swagger UI's icons. test/e2e/docs-browser.test.ts renders the page under this policy in Chromium.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Generation task gateway: API reference</title>
<link rel="stylesheet" href="${DOCS_ASSETS_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

export const DOCS_INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  // Opens on the operations, grouped by tag; the schemas stay folded below them.
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;
