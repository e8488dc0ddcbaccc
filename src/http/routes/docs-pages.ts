/**
 * The pages of /docs that are not generated from the OpenAPI document: the error catalogue, the
 * changelog (CHANGELOG.md) and the versioning policy (docs/versioning.md) rendered from the files
 * that ship with the package, and the Postman collection that the build generates from the
 * document (scripts/postman-collection.mjs, into dist/). The files are read once, when the app is
 * built; a page is rendered on its first request.
 */
import { ProblemError } from '../../errors.js'
import type { TypedApp } from '../app-types.js'
import { DOCS_NAV, POSTMAN_COLLECTION_PATH } from '../docs-nav.js'
import { renderErrorsPage } from '../errors-page.js'
import { type MarkdownOptions, renderMarkdown } from '../markdown.js'
import { packageRoot, readPackageFile } from '../package-files.js'
import { layout } from '../reference-page.js'
import { DOCS_CSP } from './docs.js'

/** The files' links to one another, as the served pages' addresses. */
const SERVED: MarkdownOptions = {
  links: {
    'CHANGELOG.md': '/docs/changelog',
    '../CHANGELOG.md': '/docs/changelog',
    'docs/versioning.md': '/docs/versioning',
    'versioning.md': '/docs/versioning',
  },
}

/** The collection's file in dist/, where scripts/build.mjs has it written. */
const POSTMAN_COLLECTION_FILE = 'dist/curriculum-api.postman_collection.json'

interface MarkdownPage {
  url: string
  file: string
  title: string
}

const PAGES: readonly MarkdownPage[] = [
  { url: '/docs/changelog', file: 'CHANGELOG.md', title: 'Curriculum API changelog' },
  { url: '/docs/versioning', file: 'docs/versioning.md', title: 'Curriculum API versioning' },
]

export function docsPagesRoutes(app: TypedApp): void {
  const root = packageRoot()
  const hidden = { hide: true }
  const html = (render: () => string) => {
    let page: string | undefined
    return () => (page ??= render())
  }

  const errorsPage = html(renderErrorsPage)
  app.get('/docs/errors', { schema: hidden }, (_request, reply) =>
    reply.header('content-security-policy', DOCS_CSP).type('text/html; charset=utf-8').send(errorsPage()),
  )

  for (const { url, file, title } of PAGES) {
    const text = readPackageFile(file, root)
    if (text === undefined) app.log.warn({ file }, `${file} is not in the package: ${url} answers 404`)
    const page = html(() => layout(title, `${DOCS_NAV}\n${renderMarkdown(text ?? '', SERVED)}`))
    app.get(url, { schema: hidden }, (_request, reply) => {
      if (text === undefined) throw new ProblemError('route_not_found', `${file} is not installed with the service.`)
      return reply.header('content-security-policy', DOCS_CSP).type('text/html; charset=utf-8').send(page())
    })
  }

  const collection = readPackageFile(POSTMAN_COLLECTION_FILE, root)
  if (collection === undefined)
    app.log.warn(`${POSTMAN_COLLECTION_FILE} was not built (npm run build): ${POSTMAN_COLLECTION_PATH} answers 404`)
  let served: string | undefined
  app.get(POSTMAN_COLLECTION_PATH, { schema: hidden }, (_request, reply) => {
    if (collection === undefined) throw new ProblemError('route_not_found', 'The Postman collection was not built.')
    served ??= withBaseUrl(collection, (app.swagger() as { servers?: { url: string }[] }).servers?.[0]?.url)
    return reply
      .header('content-disposition', 'attachment; filename="curriculum-api.postman_collection.json"')
      .type('application/json; charset=utf-8')
      .send(served)
  })
}

/** The collection with its `baseUrl` variable set to this deployment's address (PUBLIC_URL). */
function withBaseUrl(collection: string, baseUrl: string | undefined): string {
  if (baseUrl === undefined) return collection
  const parsed = JSON.parse(collection) as { variable?: { key: string; value: string }[] }
  for (const variable of parsed.variable ?? []) if (variable.key === 'baseUrl') variable.value = baseUrl
  return JSON.stringify(parsed)
}
