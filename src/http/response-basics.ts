/**
 * What every response carries, set first so that errors carry it too:
 * - `X-Request-Id`, our own id for the request (an incoming one is not trusted: it is written
 *   to the disclosure log);
 * - CORS for browser callers. Keys travel in the Authorization header, never in cookies, so
 *   any origin may call (`*`, no credentials); the headers a client needs to read are exposed.
 * OPTIONS is answered here, before authentication, since a CORS preflight carries no key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Methods the route's path accepts, for `Allow`; set on API routes and their 405 guards. */
    allow?: string
  }
}

export const EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'ETag',
  'X-Request-Id',
  'Deprecation',
  'Sunset',
  'WWW-Authenticate',
  'Allow',
  // The roster's next page, and a deprecated operation's changelog (http/deprecation.ts).
  'Link',
].join(', ')

const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, If-None-Match'
/** Chromium caps preflight caching at two hours. */
const PREFLIGHT_MAX_AGE = '7200'

export function responseBasics(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-request-id', request.id)
  // The dashboard is same-origin HTML with cookies: no CORS there.
  if (request.url.startsWith('/dashboard')) {
    done()
    return
  }
  reply.header('access-control-allow-origin', '*')
  reply.header('access-control-expose-headers', EXPOSED_HEADERS)
  if (request.method === 'OPTIONS') {
    const allow = request.routeOptions.config.allow
    if (allow !== undefined) {
      reply.code(204).header('allow', allow)
      if (request.headers['access-control-request-method'] !== undefined) {
        reply
          .header('access-control-allow-methods', allow)
          .header('access-control-allow-headers', ALLOWED_REQUEST_HEADERS)
          .header('access-control-max-age', PREFLIGHT_MAX_AGE)
      }
      reply.send()
      return
    }
  }
  done()
}
