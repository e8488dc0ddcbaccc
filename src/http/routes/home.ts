/**
 * The service's front door for people: `/` is a small page linking the API reference and the
 * dashboard, and `/favicon.ico` answers 204, so that a browser opening the service shows no 404
 * (neither on the page nor in its console). Both are hidden from the OpenAPI document: they
 * are not part of the API.
 */
import { OPENAPI_PATH } from '../api-prefix.js'
import type { TypedApp } from '../app-types.js'

const HOME_CSP = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const HOME_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Curriculum API</title>
<link rel="stylesheet" href="/docs/style.css">
</head>
<body>
<main>
<h1>Curriculum API</h1>
<ul>
<li><a href="/docs">API reference</a>: every endpoint, with examples
(<a href="${OPENAPI_PATH}">OpenAPI document</a>)</li>
<li><a href="/dashboard">Dashboard</a>: partners sign up, get a sandbox with a test key,
apply for live access and manage keys</li>
</ul>
</main>
</body>
</html>
`

export function homeRoutes(app: TypedApp): void {
  const hidden = { hide: true }
  app.get('/', { schema: hidden }, (_request, reply) =>
    reply
      .header('content-security-policy', HOME_CSP)
      .header('cache-control', 'public, max-age=3600')
      .type('text/html; charset=utf-8')
      .send(HOME_HTML),
  )
  // No icon of our own: "nothing here" without an error, cached for a day so it is asked once.
  app.get('/favicon.ico', { schema: hidden }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').code(204).send(),
  )
}
