/**
 * Deprecated operations in the API (docs/versioning.md). An operation listed in
 * DEPRECATED_OPERATIONS (domain/deprecation.ts) is marked `deprecated: true` in the OpenAPI
 * document and in /docs, with its dates in the description, and every answer it gives, refusals
 * included, carries:
 *
 * - `Deprecation: @<Unix seconds>` (RFC 9745 section 2): when it was, or will be, deprecated;
 * - `Sunset: <HTTP-date>` (RFC 8594 section 3): after when it may stop answering;
 * - `Link: </docs/changelog>; rel="deprecation"; type="text/html"` (RFC 9745 section 3): where
 *   the change is explained.
 */
import type { onSendHookHandler } from 'fastify'
import type { Deprecation } from '../domain/deprecation.js'
import type { TypedApp } from './app-types.js'

// biome-ignore lint/suspicious/noExplicitAny: route schemas are read and copied as loose JSON, field by field
type Json = Record<string, any>

const DOCUMENTED_HEADERS = {
  Deprecation: { type: 'string', description: 'RFC 9745: `@` and the Unix time of the deprecation.' },
  Sunset: { type: 'string', description: 'RFC 8594: the HTTP-date after which the operation may be removed.' },
  Link: { type: 'string', description: 'Carries `rel="deprecation"`, the changelog that explains the change.' },
}

/** The route's schema as the document shows a deprecated operation: marked, dated, and its headers listed. */
function documented(schema: Json, operation: Deprecation): Json {
  const note =
    `**Deprecated** on ${operation.deprecatedAt}; it may be removed after ${operation.sunsetAt} ` +
    '(the `Deprecation` and `Sunset` headers of every answer say so). See [the changelog](/docs/changelog).'
  const response = Object.fromEntries(
    Object.entries((schema.response ?? {}) as Json).map(([status, entry]) => [
      status,
      typeof entry?.headers === 'object' ? { ...entry, headers: { ...entry.headers, ...DOCUMENTED_HEADERS } } : entry,
    ]),
  )
  return {
    ...schema,
    deprecated: true,
    'x-deprecation': { deprecatedAt: operation.deprecatedAt, sunsetAt: operation.sunsetAt },
    description: schema.description === undefined ? note : `${note}\n\n${schema.description}`,
    ...(schema.response === undefined ? {} : { response }),
  }
}

function headersHook(operation: Deprecation): onSendHookHandler {
  const { deprecation: at, sunset, link } = operation.headers
  const sunsetAt = Date.parse(operation.sunsetAt)
  return (_request, reply, payload, done) => {
    // A rolled key's answers carry the key's own end (key-sunset-headers.ts): the sooner end is the one to act on.
    const keyEnd = reply.getHeader('sunset')
    if (keyEnd === undefined || Date.parse(String(keyEnd)) > sunsetAt)
      reply.header('deprecation', at).header('sunset', sunset)
    // Another link (the roster's rel="next") stays beside this one.
    const links = reply.getHeader('link')
    if (links === undefined) reply.header('link', link)
    else if (!String(links).includes(link)) reply.header('link', `${links}, ${link}`)
    done(null, payload)
  }
}

/**
 * Marks the operations listed (see DEPRECATED_OPERATIONS) as their routes are registered: call it
 * before any route. An entry that no route matches fails the start, since it would deprecate nothing.
 */
export function deprecateOperations(app: TypedApp, operations: Readonly<Record<string, Deprecation>>): void {
  const unmatched = new Set(Object.keys(operations))
  if (unmatched.size === 0) return
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      // A GET's answers to HEAD carry the headers too; the document lists the GET only.
      const key = `${method === 'HEAD' ? 'GET' : method} ${route.url}`
      const operation = operations[key]
      if (operation === undefined) continue
      unmatched.delete(key)
      if (method !== 'HEAD' && route.schema !== undefined) route.schema = documented(route.schema as Json, operation)
      route.onSend = [...[route.onSend ?? []].flat(), headersHook(operation)]
    }
  })
  app.addHook('onReady', async () => {
    if (unmatched.size > 0) throw new Error(`deprecated operations that no route serves: ${[...unmatched].join(', ')}`)
  })
}

/** The mark /docs puts beside a deprecated operation's heading. */
export function deprecatedMark(operation: { deprecated?: boolean }): string {
  return operation.deprecated === true ? ' <strong class="deprecated">Deprecated</strong>' : ''
}
