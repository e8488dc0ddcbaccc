/**
 * Who may call what, decided before any route code runs.
 *
 * `authenticate` (a global onRequest hook, for every /api/v1 path but the OpenAPI document):
 * 1. A client address with too many failed authentications in the window gets 429, whatever
 *    it sends, so keys cannot be guessed (and storage cannot be flooded with lookups).
 * 2. The bearer key (RFC 6750 2.1; never from the URL) must be well formed, known, unrevoked
 *    and unexpired: otherwise 401 with `WWW-Authenticate`, and the failure counts against the
 *    address.
 * 3. The key's rolling-window limit: every authenticated request counts except those refused
 *    here with 429. Every authenticated response carries the rate-limit fields.
 * 4. A suspended organisation's keys get 403.
 *
 * `requireScope` (a route-level onRequest hook on the student routes): the scope and an active
 * data-sharing agreement on the key's organisation, otherwise 403, with the refusal written to
 * the disclosure log.
 *
 * This is the hot path of every request: refusals are sent directly (no exception, whose stack
 * trace would cost more than the rest of the request), and nothing here allocates more than it
 * must.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { isAgreementActive } from '../domain/agreements.js'
import { hashApiKey, isWellFormedApiKey } from '../domain/api-key.js'
import type { Scope } from '../domain/scopes.js'
import type { RateDecision, RateLimiter } from '../domain/sliding-window.js'
import type { Problem } from '../errors.js'
import type { KeyRecord } from '../storage/access-repository.js'
import { type DisclosureAction, recordDisclosure } from '../storage/disclosure-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'
import type { KeyCache } from '../services/key-cache.js'
import type { KeyUsage } from '../services/key-usage.js'
import { sendProblem } from './problem-responses.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key, set for every /api/v1 request that passed authentication. */
    principal: KeyRecord | null
  }
}

export const REALM = 'curriculum-api'

// RFC 6750 2.1: credentials = "Bearer" 1*SP b68token; the scheme is case-insensitive (RFC 9110 11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export type AuthFailure = 'api_key_missing' | 'api_key_invalid' | 'api_key_expired' | 'api_key_revoked'

function authFailure(code: AuthFailure, detail: string): Problem {
  const challenge = code === 'api_key_missing' ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token", error_description="${detail.split('.')[0]}"`
  return { code, detail, headers: { 'www-authenticate': challenge } }
}

/** Each refusal's problem, built once: the answer to a guessing client costs no allocation. */
export const AUTH_FAILURES: Record<AuthFailure, Problem> = {
  api_key_missing: authFailure('api_key_missing', 'Send your API key as "Authorization: Bearer <key>". Keys are never accepted in the URL.'),
  api_key_invalid: authFailure('api_key_invalid', 'The bearer token is not an API key issued by this service. Check that it was copied whole.'),
  api_key_expired: authFailure('api_key_expired', 'This API key has expired. Ask the operator for a new key.'),
  api_key_revoked: authFailure('api_key_revoked', 'This API key was revoked. Ask the operator for a new key.'),
}

export const SUSPENDED: Problem = { code: 'organisation_suspended', detail: 'The organisation this key belongs to is suspended. Contact the operator.' }

export interface AccessControlOptions {
  keys: KeyCache
  usage: KeyUsage
  limiter: RateLimiter
  authFailures: RateLimiter
  clock: Clock
  policy: string
}

function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)))
}

export function tooManyFailures(blocked: RateDecision): Problem {
  return {
    code: 'too_many_failed_authentications',
    detail: `Too many requests from your address failed authentication; retry in ${retryAfter(blocked.resetMs)} seconds.`,
    headers: { 'retry-after': retryAfter(blocked.resetMs) },
  }
}

export function rateLimited(decision: RateDecision, windowMs: number): Problem {
  return {
    code: 'rate_limited',
    detail: `This key made ${decision.limit} requests in the last ${windowMs / 1000} seconds; retry in ${retryAfter(decision.resetMs)} seconds.`,
    headers: { 'retry-after': retryAfter(decision.resetMs) },
  }
}

/**
 * The hash of the key an Authorization header carries, or why it carries none that can be used.
 * Needs no storage: the key's form and checksum are checked first.
 */
export function keyHashOf(header: string | undefined): { hash: string } | AuthFailure {
  if (header === undefined) return 'api_key_missing'
  const token = BEARER.exec(header)?.[1]
  if (token === undefined) return /^bearer\b/i.test(header) ? 'api_key_invalid' : 'api_key_missing'
  if (!isWellFormedApiKey(token)) return 'api_key_invalid'
  return { hash: hashApiKey(token) }
}

/** A looked-up key, or why it cannot be used now. */
export function usableKey(record: KeyRecord | null, now: number): KeyRecord | AuthFailure {
  if (record === null) return 'api_key_invalid'
  if (record.revokedAt !== null && record.revokedAt <= now) return 'api_key_revoked'
  if (record.expiresAt !== null && record.expiresAt <= now) return 'api_key_expired'
  return record
}

async function identify(request: FastifyRequest, keys: KeyCache, now: number): Promise<KeyRecord | AuthFailure> {
  const key = keyHashOf(request.headers.authorization)
  if (typeof key === 'string') return key
  const found = keys.lookup(key.hash)
  return usableKey(found instanceof Promise ? await found : found, now)
}

export function createAuthentication(options: AccessControlOptions) {
  const { keys, usage, limiter, authFailures, clock, policy } = options

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    request.principal = null
    // A CORS preflight never carries credentials (Fetch standard); response-basics answers it
    // on every route, and the not-found handler answers it 404.
    if (request.method === 'OPTIONS') return undefined
    const blocked = await authFailures.peek(request.ip)
    if (!blocked.allowed) return sendProblem(request, reply, tooManyFailures(blocked))
    const identified = await identify(request, keys, clock.now())
    if (typeof identified === 'string') {
      await authFailures.hit(request.ip)
      return sendProblem(request, reply, AUTH_FAILURES[identified])
    }
    const decision = await limiter.hit(identified.keyId)
    setRateLimitHeaders(reply, decision, policy, clock.now())
    usage.count(identified.keyId, !decision.allowed)
    if (!decision.allowed) return sendProblem(request, reply, rateLimited(decision, limiter.windowMs))
    request.principal = identified
    if (!identified.organisationActive) return sendProblem(request, reply, SUSPENDED)
    return undefined
  }
}

/**
 * A route-level hook: the key needs `scope` and, unless it is a sandbox test key, an active
 * data-sharing agreement. A refusal is recorded as a disclosure attempt on the student.
 */
export function requireScope(scope: Scope, action: DisclosureAction, options: { writes: WriteQueue; clock: Clock }) {
  const missingScope: Problem = {
    code: 'insufficient_scope',
    detail: `This endpoint needs an API key with the scope "${scope}".`,
    headers: { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
  }
  const noAgreement: Problem = {
    code: 'agreement_required',
    detail: 'Student data needs an active signed data-sharing agreement on your organisation; none is in force. Contact the operator.',
  }
  return async function checkScope(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const record = request.principal
    // Unreachable (authentication runs first and admits only with a key); refuse, never serve.
    if (record === null) return sendProblem(request, reply, AUTH_FAILURES.api_key_missing)
    const now = options.clock.now()
    const hasScope = record.scopes.has(scope)
    // Sandbox data is synthetic: no child's data, so no agreement is needed to reach it.
    if (hasScope && (record.sandbox || isAgreementActive(record.agreements, now))) return undefined
    const studentId = (request.params as { id?: string }).id
    if (studentId !== undefined && UUID.test(studentId)) {
      const context = { at: now, requestId: request.id, keyId: record.keyId, organisationId: record.organisationId }
      const outcome = hasScope ? 'denied_agreement' : 'denied_scope'
      await options.writes.statement((db) => recordDisclosure(db, context, studentId.toLowerCase(), action, outcome))
    }
    return sendProblem(request, reply, hasScope ? noAgreement : missingScope)
  }
}

