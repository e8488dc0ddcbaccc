/**
 * The headers of every lesson player page. The pages live in a platform's iframe, so framing is
 * allowed, by any https origin: a platform's pages may be on hosts its registration names nowhere
 * (hosted Canvas answers on each school's own domain, its issuer and endpoints elsewhere). What a
 * framing page could trick a learner into is their own lesson's next step, nothing of anyone else's.
 * Loopback origins are added only where loopback platforms are allowed (local development, tests).
 */
import type { FastifyReply } from 'fastify'

const LOOPBACK_FRAMERS = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*']

export function playerCsp(allowLoopback: boolean): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors 'self' https:${allowLoopback ? ` ${LOOPBACK_FRAMERS.join(' ')}` : ''}`,
  ].join('; ')
}

export function playerHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return (
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      // The page's URL carries the lesson's sealed session: never hand it to another site.
      .header('referrer-policy', 'no-referrer')
      // A learner's page, often on a shared school device: kept in no cache.
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
  )
}
