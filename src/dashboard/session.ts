/**
 * Who is signed in, and proof that a form was sent from our own page.
 *
 * - `cur_session`: a random token naming a server-side session (only its hash is stored).
 * - `cur_csrf`: a random value every visitor gets; the CSRF token in each form is its HMAC
 *   under a secret shared by all instances. A POST must carry the token matching its cookie:
 *   a page on another site can neither read the cookie nor compute the HMAC. Signing in or out
 *   rotates both cookies, so a token fixed before sign-in is worthless after.
 * Both cookies are httpOnly, SameSite=Lax, scoped to /dashboard, and Secure over TLS.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { accountForSession, createSession, deleteSession } from '../storage/account-repository.js'
import type { AccountRow, Database } from '../storage/database.js'
import { clearCookie, readCookie, setCookie } from './cookies.js'
import { DashboardError } from './dashboard-error.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard account, or null. */
    account: AccountRow | null
    /** The CSRF token to put in this page's forms. */
    csrfToken: string
  }
}

const SESSION_COOKIE = 'cur_session'
const CSRF_COOKIE = 'cur_csrf'
export const SESSION_LIFETIME_MS = 8 * 3_600_000

export interface SessionSupport {
  load(request: FastifyRequest, reply: FastifyReply): Promise<void>
  signIn(request: FastifyRequest, reply: FastifyReply, account: AccountRow): Promise<void>
  signOut(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

export function createSessionSupport(options: { db: Kysely<Database>; clock: Clock; secret: Buffer }): SessionSupport {
  const { db, clock, secret } = options
  const sign = (value: string) => createHmac('sha256', secret).update(`csrf:${value}`).digest('base64url')
  const secure = (request: FastifyRequest) => request.protocol === 'https'

  function newCsrf(request: FastifyRequest, reply: FastifyReply): void {
    const value = randomBytes(24).toString('base64url')
    setCookie(reply, CSRF_COOKIE, value, { secure: secure(request) })
    request.csrfToken = sign(value)
  }

  return {
    async load(request, reply) {
      const csrf = readCookie(request, CSRF_COOKIE)
      if (csrf === undefined) newCsrf(request, reply)
      else request.csrfToken = sign(csrf)
      const token = readCookie(request, SESSION_COOKIE)
      request.account = token === undefined ? null : ((await accountForSession(db, token, clock.now())) ?? null)
      if (request.method === 'POST') {
        const sent = (request.body as Record<string, unknown> | undefined)?._csrf
        const expected = Buffer.from(request.csrfToken)
        const ok = csrf !== undefined && typeof sent === 'string' && sent.length === expected.length && timingSafeEqual(Buffer.from(sent), expected)
        if (!ok) {
          throw new DashboardError(403, 'This form has expired', 'The form was not sent from this dashboard, or it was open too long. Go back, reload the page and try again.')
        }
      }
    },
    async signIn(request, reply, account) {
      const token = await createSession(db, account.id, clock.now(), SESSION_LIFETIME_MS)
      setCookie(reply, SESSION_COOKIE, token, { secure: secure(request), maxAgeSeconds: SESSION_LIFETIME_MS / 1000 })
      newCsrf(request, reply)
      request.account = account
    },
    async signOut(request, reply) {
      const token = readCookie(request, SESSION_COOKIE)
      if (token !== undefined) await deleteSession(db, token)
      clearCookie(reply, SESSION_COOKIE, secure(request))
      newCsrf(request, reply)
      request.account = null
    },
  }
}
