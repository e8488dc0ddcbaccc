/**
 * Proof that a state-changing request was sent by our own page, in two independent checks.
 *
 * 1. Where it came from. Browsers name the sender of every POST: `Sec-Fetch-Site` (Fetch
 *    Metadata) and `Origin` (RFC 6454 section 7; sent on every POST form submission). Anything
 *    but our own origin is refused. Same-*site* is not enough: a page on another port of this
 *    host is same-site, and cookies do not separate ports (RFC 6265 section 8.5), which is how a
 *    page there once planted its own CSRF cookie and token. A request with neither header cannot
 *    come from a current browser, so no page can have forged it; it still needs check 2.
 * 2. A token bound to the session: HMAC(secret, session token). A page elsewhere cannot read it,
 *    and planting cookies does not help, because a token issued to another session (the
 *    attacker's own) does not match the victim's. Before sign-in, the token is bound to a
 *    random visitor cookie instead, which only guards the sign-in and sign-up forms (check 1
 *    stops login CSRF).
 *
 * See the OWASP CSRF Prevention Cheat Sheet ("Signed Double-Submit Cookie", "Verifying Origin
 * With Standard Headers", "Fetch Metadata headers").
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { DashboardError } from './dashboard-error.js'

/** What a CSRF token is bound to: the session when signed in, the visitor cookie before. */
export type CsrfBinding = { kind: 'session'; token: string } | { kind: 'visitor'; value: string }

/** The token for a binding; the secret is shared by every instance (settings table). */
export function csrfToken(secret: Buffer, binding: CsrfBinding): string {
  const subject = binding.kind === 'session' ? `session:${binding.token}` : `visitor:${binding.value}`
  return createHmac('sha256', secret).update(`csrf:${subject}`).digest('base64url')
}

/** Fetch Metadata values a page of ours can send: same-origin, or `none` (the user's own action, e.g. a bookmark). */
export const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none'])

/** The origin of a URL as browsers serialise it (a default port left out), or null if it has none. */
function originOf(url: string): string | null {
  if (!URL.canParse(url)) return null
  const origin = new URL(url).origin
  return origin === 'null' ? null : origin
}

/**
 * True when `url` (an Origin or Referer header) is of this dashboard's origin: the request's own
 * scheme and host, which behind a TLS proxy are right only with TRUST_PROXY (as for the Secure
 * cookie flag and the key page's examples).
 */
export function isOwnOrigin(request: FastifyRequest, url: string): boolean {
  const own = originOf(`${request.protocol}://${request.host}`)
  return own !== null && originOf(url) === own
}

/** Why the request's sender is not this dashboard, or null. */
export function foreignSender(request: FastifyRequest): string | null {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined && !ALLOWED_FETCH_SITES.has(String(site).toLowerCase()))
    return `Sec-Fetch-Site: ${String(site)}`
  const origin = request.headers.origin
  if (origin !== undefined && !isOwnOrigin(request, origin)) return `Origin: ${origin}`
  return null
}

/**
 * Throws the dashboard's 403 page unless the request came from our page with the right token:
 * the form's `_csrf` field, or `sent` for a multipart form, which reads its fields itself.
 */
export function verifyCsrf(request: FastifyRequest, expected: string, sent?: unknown): void {
  const foreign = foreignSender(request)
  if (foreign !== null) {
    request.log.warn({ sender: foreign }, 'dashboard form refused: sent from another origin')
    throw new DashboardError(
      403,
      'Sent from another site',
      'This form was not sent from a page of this dashboard, so nothing was changed. ' +
        'Open the dashboard yourself and try again there.',
    )
  }
  const token = sent ?? (request.body as Record<string, unknown> | undefined)?._csrf
  const want = Buffer.from(expected)
  const ok =
    expected !== '' &&
    typeof token === 'string' &&
    Buffer.byteLength(token) === want.length &&
    timingSafeEqual(Buffer.from(token), want)
  if (!ok) {
    throw new DashboardError(
      403,
      'This form has expired',
      'The form was not sent from this dashboard, or it was open too long. Go back, reload the page and try again.',
    )
  }
}
