/**
 * Who may call what, decided before any route code runs (one onRequest hook, in this order):
 *
 * 1. A client address with too many failed authentications in the window gets 429, whatever
 *    it sends, so keys cannot be guessed (and storage cannot be flooded with lookups).
 * 2. The bearer key (RFC 6750 2.1; never from the URL) must be well formed, known, unrevoked
 *    and unexpired: otherwise 401 with `WWW-Authenticate`, and the failure counts against the
 *    address.
 * 3. The key's rolling-window limit: every authenticated request counts except those refused
 *    here with 429. Every authenticated response carries the rate-limit fields.
 * 4. Routes that name a scope also need that scope and an active data-sharing agreement on the
 *    key's organisation: otherwise 403, and the refusal is written to the disclosure log.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { isAgreementActive } from '../domain/agreements.js'
import { hashApiKey, isWellFormedApiKey } from '../domain/api-key.js'
import type { Scope } from '../domain/scopes.js'
import type { RateLimiter } from '../domain/sliding-window.js'
import { type ProblemCode, ProblemError } from '../errors.js'
import type { KeyRecord } from '../storage/access-repository.js'
import type { Database } from '../storage/database.js'
import { type DisclosureAction, recordDisclosure } from '../storage/disclosure-repository.js'
import type { KeyCache } from '../services/key-cache.js'
import type { KeyUsage } from '../services/key-usage.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key, set for every /api/v1 request that passed authentication. */
    principal: KeyRecord | null
  }
  interface FastifyContextConfig {
    /** Served without a key (documentation). */
    public?: boolean
    /** Scope the route needs; implies the data-sharing agreement check. */
    scope?: Scope
    /** What a student route does to a student's data, for the disclosure log. */
    disclosure?: DisclosureAction
  }
}

export const REALM = 'curriculum-api'

// RFC 6750 2.1: credentials = "Bearer" 1*SP b68token; the scheme is case-insensitive (RFC 9110 11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const AUTH_FAILURES: Partial<Record<ProblemCode, string>> = {
  api_key_missing: 'Send your API key as "Authorization: Bearer <key>". Keys are never accepted in the URL.',
  api_key_invalid: 'The bearer token is not an API key issued by this service. Check that it was copied whole.',
  api_key_expired: 'This API key has expired. Ask the operator for a new key.',
  api_key_revoked: 'This API key was revoked. Ask the operator for a new key.',
}

export interface AccessControlOptions {
  keys: KeyCache
  usage: KeyUsage
  limiter: RateLimiter
  authFailures: RateLimiter
  clock: Clock
  db: Kysely<Database>
  policy: string
}

function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)))
}

export function createAccessControl(options: AccessControlOptions) {
  const { keys, usage, limiter, authFailures, clock, db, policy } = options

  async function refuse(request: FastifyRequest, code: ProblemCode): Promise<never> {
    await authFailures.hit(request.ip)
    const challenge =
      code === 'api_key_missing'
        ? `Bearer realm="${REALM}"`
        : `Bearer realm="${REALM}", error="invalid_token", error_description="${AUTH_FAILURES[code]!.split('.')[0]}"`
    throw new ProblemError(code, AUTH_FAILURES[code]!, { headers: { 'www-authenticate': challenge } })
  }

  async function authenticate(request: FastifyRequest): Promise<KeyRecord> {
    const blocked = await authFailures.peek(request.ip)
    if (!blocked.allowed) {
      throw new ProblemError(
        'too_many_failed_authentications',
        `Too many requests from your address failed authentication; retry in ${retryAfter(blocked.resetMs)} seconds.`,
        { headers: { 'retry-after': retryAfter(blocked.resetMs) } },
      )
    }
    const header = request.headers.authorization
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1]
    if (token === undefined) return refuse(request, header === undefined || !/^bearer\b/i.test(header) ? 'api_key_missing' : 'api_key_invalid')
    if (!isWellFormedApiKey(token)) return refuse(request, 'api_key_invalid')
    const found = keys.lookup(hashApiKey(token))
    const record = found instanceof Promise ? await found : found
    if (record === null) return refuse(request, 'api_key_invalid')
    const now = clock.now()
    if (record.revokedAt !== null && record.revokedAt <= now) return refuse(request, 'api_key_revoked')
    if (record.expiresAt !== null && record.expiresAt <= now) return refuse(request, 'api_key_expired')
    return record
  }

  async function authorize(request: FastifyRequest, record: KeyRecord, scope: Scope): Promise<void> {
    const hasScope = record.scopes.has(scope)
    // Sandbox data is synthetic: no child's data, so no agreement is needed to reach it.
    const hasAgreement = hasScope && (record.sandbox || isAgreementActive(record.agreements, clock.now()))
    if (hasScope && hasAgreement) return
    const studentId = (request.params as { id?: string }).id
    const action = request.routeOptions.config.disclosure
    if (action !== undefined && studentId !== undefined && UUID.test(studentId)) {
      const context = { at: clock.now(), requestId: request.id, keyId: record.keyId, organisationId: record.organisationId }
      await recordDisclosure(db, context, studentId.toLowerCase(), action, hasScope ? 'denied_agreement' : 'denied_scope')
    }
    if (!hasScope) {
      throw new ProblemError('insufficient_scope', `This endpoint needs an API key with the scope "${scope}".`, {
        headers: { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
      })
    }
    throw new ProblemError(
      'agreement_required',
      "Student data needs an active signed data-sharing agreement on your organisation; none is in force. Contact the operator.",
    )
  }

  return async function accessControl(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.principal = null
    const config = request.routeOptions.config
    if (config.public === true || request.method === 'OPTIONS' || !request.url.startsWith('/api/v1/')) return
    const record = await authenticate(request)
    const decision = await limiter.hit(record.keyId)
    setRateLimitHeaders(reply, decision, policy, clock.now())
    usage.count(record.keyId, !decision.allowed)
    if (!decision.allowed) {
      throw new ProblemError(
        'rate_limited',
        `This key made ${decision.limit} requests in the last ${limiter.windowMs / 1000} seconds; retry in ${retryAfter(decision.resetMs)} seconds.`,
        { headers: { 'retry-after': retryAfter(decision.resetMs) } },
      )
    }
    request.principal = record
    if (!record.organisationActive) {
      throw new ProblemError('organisation_suspended', 'The organisation this key belongs to is suspended. Contact the operator.')
    }
    if (config.scope !== undefined) await authorize(request, record, config.scope)
  }
}
