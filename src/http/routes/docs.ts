/**
 * Documentation a partner can use, served by the service itself and needing no key:
 * the OpenAPI document, a readable reference rendered from it, and the webhooks chapter; the
 * other pages (the error catalogue, the changelog, versioning, the Postman collection) are in
 * docs-pages.ts.
 */
import { OPENAPI_PATH } from '../api-prefix.js'
import type { TypedApp } from '../app-types.js'
import { REFERENCE_CSS, renderReference } from '../reference-page.js'
import { renderWebhooksChapter, type WebhookDeployment } from '../webhooks-page.js'

/** No script, no third-party anything: the pages are static HTML and one stylesheet. */
export const DOCS_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function docsRoutes(app: TypedApp, webhooks: WebhookDeployment): void {
  let openApiJson: string | undefined
  let referenceHtml: string | undefined
  let webhooksHtml: string | undefined
  const documentJson = () => (openApiJson ??= JSON.stringify(app.swagger()))

  const hidden = { hide: true }

  app.get(OPENAPI_PATH, { schema: hidden }, (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(documentJson()),
  )

  app.get('/docs', { schema: hidden }, (_request, reply) => {
    referenceHtml ??= renderReference(JSON.parse(documentJson()))
    return reply.header('content-security-policy', DOCS_CSP).type('text/html; charset=utf-8').send(referenceHtml)
  })

  app.get('/docs/webhooks', { schema: hidden }, (_request, reply) => {
    webhooksHtml ??= renderWebhooksChapter(JSON.parse(documentJson()), webhooks)
    return reply.header('content-security-policy', DOCS_CSP).type('text/html; charset=utf-8').send(webhooksHtml)
  })

  app.get('/docs/style.css', { schema: hidden }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(REFERENCE_CSS),
  )
}
