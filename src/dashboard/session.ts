/**
 * Who is signed in, and the CSRF token their forms carry (checked in csrf.ts).
 *
 * - `cur_session`: a random token naming a server-side session (only its hash is stored). The
 *   CSRF token of a signed-in visitor is the HMAC of this token, so it is worth nothing in any
 *   other session.
 * - `cur_csrf`: a random value a visitor gets before signing in; the sign-in and sign-up forms'
 *   token is its HMAC. Signing in or out changes the token.
 * - `cur_device`: a random value naming the browser for 400 days, set at a full sign-in; only its
 *   hash is stored per account (cases/notices.ts), so a sign-in from another browser is told.
 * All are httpOnly and SameSite=Lax; over TLS they are `__Host-` cookies (cookies.ts).
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { endSession, recordSessionUse, startSession } from '../cases/accounts.js'
import { type NoticeContext, recordSignInDevice } from '../cases/notices.js'
import { accountForSession, type SessionOrigin } from '../storage/account-repository.js'
import type { AccountRow, Database } from '../storage/tables.js'
import { clearCookie, readCookie, setCookie } from './cookies.js'
import { csrfToken, verifyCsrf } from './csrf.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard account, or null. */
    account: AccountRow | null
    /** The CSRF token to put in this page's forms. */
    csrfToken: string
    /** The signed-in session's id (what the Account page names it by), or null. */
    sessionId: string | null
    /** The account whose password was right and whose second factor's code is awaited (`account` is null). */
    awaitingCode: AccountRow | null
  }
}

const SESSION_COOKIE = 'cur_session'
const VISITOR_COOKIE = 'cur_csrf'
const DEVICE_COOKIE = 'cur_device'
/** The longest a browser keeps a cookie (RFC 6265bis): a device is known until it has not signed in for that long. */
const DEVICE_COOKIE_SECONDS = 400 * 86_400
export const SESSION_LIFETIME_MS = 8 * 3_600_000
/** How long a session waiting for the second factor's code lasts: time to open the app, not to guess. */
export const PENDING_SESSION_LIFETIME_MS = 10 * 60_000
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface SessionSupport {
  /** Finds the session; on any unsafe method, refuses a request not sent by our own page (403). */
  load(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** `pending`: the password was right, the second factor's code is still awaited (two-step-gate.ts). */
  signIn(request: FastifyRequest, reply: FastifyReply, account: AccountRow, pending?: boolean): Promise<void>
  signOut(request: FastifyRequest, reply: FastifyReply): Promise<void>
  /** The signed-in session's token (from the cookie, or just issued by signIn), or undefined. */
  tokenOf(request: FastifyRequest): string | undefined
}

/** Where a request comes from, as a session records it. */
export function originOf(request: FastifyRequest): SessionOrigin {
  return { address: request.ip, userAgent: request.headers['user-agent'] ?? null }
}

export function createSessionSupport(options: {
  db: Kysely<Database>
  clock: Clock
  secret: Buffer
  /** Where a sign-in from a new device is told; none when left out. */
  notices?: NoticeContext
}): SessionSupport {
  const { db, clock, secret, notices } = options
  // Kept off the request object so that nothing serialises or logs it by accident.
  const tokens = new WeakMap<FastifyRequest, string>()

  /** Binds this request's forms to the visitor cookie, creating it if need be. */
  function visitorToken(request: FastifyRequest, reply: FastifyReply): void {
    let value = readCookie(request, VISITOR_COOKIE)
    if (value === undefined) {
      value = randomBytes(24).toString('base64url')
      setCookie(request, reply, VISITOR_COOKIE, value)
    }
    request.csrfToken = csrfToken(secret, { kind: 'visitor', value })
  }

  return {
    async load(request, reply) {
      const token = readCookie(request, SESSION_COOKIE)
      const live = token === undefined ? undefined : await accountForSession(db, token, clock.now())
      const pending = live?.session.second_factor_pending === 1
      request.account = pending ? null : (live?.account ?? null)
      request.awaitingCode = pending ? live!.account : null
      request.sessionId = live?.session.id ?? null
      if (live !== undefined) {
        tokens.set(request, token!)
        request.csrfToken = csrfToken(secret, { kind: 'session', token: token! })
        await recordSessionUse(db, live.session, originOf(request), clock.now())
      } else visitorToken(request, reply)
      // Every state-changing method (RFC 9110 section 9.2.1); the dashboard's forms only POST.
      if (!SAFE_METHODS.has(request.method) && request.routeOptions.config.csrfInHandler !== true)
        verifyCsrf(request, request.csrfToken)
    },
    async signIn(request, reply, account, pending = false) {
      // The session this request came with (a waiting one, after its code) is replaced, not kept.
      const previous = tokens.get(request)
      if (previous !== undefined) await endSession(db, previous)
      const lifetime = pending ? PENDING_SESSION_LIFETIME_MS : SESSION_LIFETIME_MS
      const { token, id } = await startSession(db, account.id, originOf(request), clock.now(), lifetime, pending)
      setCookie(request, reply, SESSION_COOKIE, token, { maxAgeSeconds: lifetime / 1000 })
      tokens.set(request, token)
      request.csrfToken = csrfToken(secret, { kind: 'session', token })
      request.account = pending ? null : account
      request.awaitingCode = pending ? account : null
      request.sessionId = id
      if (!pending && notices !== undefined) {
        // A full sign-in only: the device is the browser's, renewed at each sign-in so it stays known.
        const device = readCookie(request, DEVICE_COOKIE) ?? randomBytes(32).toString('base64url')
        await recordSignInDevice(db, account, device, originOf(request), notices, clock.now())
        setCookie(request, reply, DEVICE_COOKIE, device, { maxAgeSeconds: DEVICE_COOKIE_SECONDS })
      }
    },
    async signOut(request, reply) {
      const token = readCookie(request, SESSION_COOKIE)
      if (token !== undefined) await endSession(db, token)
      clearCookie(request, reply, SESSION_COOKIE)
      tokens.delete(request)
      // A fresh visitor value, so a token from before sign-out is not valid after it.
      const value = randomBytes(24).toString('base64url')
      setCookie(request, reply, VISITOR_COOKIE, value)
      request.csrfToken = csrfToken(secret, { kind: 'visitor', value })
      request.account = null
      request.awaitingCode = null
      request.sessionId = null
    },
    tokenOf(request) {
      return tokens.get(request)
    },
  }
}
