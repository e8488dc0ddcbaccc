/**
 * Who may call the API: one decision, taken in the same order for the router's hook
 * (access-control.ts) and the fast path (fast-path.ts), which only write the answer.
 *
 * 1. An address with too many failed authentications in the window is refused (429) whatever
 *    it sends, before anything touches storage.
 * 2. The bearer key (RFC 6750 2.1; never from the URL) must be well formed, known, unrevoked
 *    and unexpired, otherwise 401. Each such failure is counted against the address in the
 *    same step that decides it (`hit`, or a `reserve` taken before a storage lookup and given
 *    back when the key turns out valid), so concurrent guesses cannot all pass a check made
 *    before any of them counted: the failure past the limit is answered 429, not 401.
 * 3. The key's own rolling-window limit, then its organisation's (all its keys together). A
 *    request either limit refuses is not counted by the other (the key's hit is a reservation
 *    given back). Every answer to an identified key carries both limits' fields.
 * 4. A suspended organisation's keys get 403.
 *
 * Decisions come back synchronously when the limiters and the key cache can give them so (the
 * fast path depends on it), and as promises otherwise.
 */
import type { Clock } from '../clock.js'
import { hashApiKey, isWellFormedApiKey, type KeyRecord, keyState } from '../domain/api-key.js'
import type { RateDecision, RateLimiter, Reservation } from '../domain/sliding-window.js'
import type { Problem } from '../errors.js'
import type { KeyCache } from '../services/key-cache.js'
import type { KeyUsage } from '../services/key-usage.js'
import type { RateState } from './rate-limit-headers.js'

export const REALM = 'curriculum-api'

// RFC 6750 2.1: credentials = "Bearer" 1*SP b68token; the scheme is case-insensitive (RFC 9110 11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

export type AuthFailure = 'api_key_missing' | 'api_key_invalid' | 'api_key_expired' | 'api_key_revoked'

function authFailure(code: AuthFailure, detail: string): Problem {
  const challenge =
    code === 'api_key_missing'
      ? `Bearer realm="${REALM}"`
      : `Bearer realm="${REALM}", error="invalid_token", error_description="${detail.split('.')[0]}"`
  return { code, detail, headers: { 'www-authenticate': challenge } }
}

/** Each refusal's problem, built once: the answer to a guessing client costs no allocation. */
export const AUTH_FAILURES: Record<AuthFailure, Problem> = {
  api_key_missing: authFailure(
    'api_key_missing',
    'Send your API key as "Authorization: Bearer <key>". Keys are never accepted in the URL.',
  ),
  api_key_invalid: authFailure(
    'api_key_invalid',
    'The bearer token is not an API key issued by this service. Check that it was copied whole.',
  ),
  api_key_expired: authFailure('api_key_expired', 'This API key has expired. Create a new key in the dashboard.'),
  api_key_revoked: authFailure('api_key_revoked', 'This API key was revoked. Create a new key in the dashboard.'),
}

export const SUSPENDED: Problem = {
  code: 'organisation_suspended',
  detail: 'The organisation this key belongs to is suspended. Contact the operator.',
}

function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)))
}

export function tooManyFailures(blocked: RateDecision): Problem {
  return {
    code: 'too_many_failed_authentications',
    detail:
      'Too many requests from your address failed authentication; ' +
      `retry in ${retryAfter(blocked.resetMs)} seconds.`,
    headers: { 'retry-after': retryAfter(blocked.resetMs) },
  }
}

export function rateLimited(decision: RateDecision, windowMs: number): Problem {
  return {
    code: 'rate_limited',
    detail:
      `This key made ${decision.limit} requests in the last ${windowMs / 1000} seconds; ` +
      `retry in ${retryAfter(decision.resetMs)} seconds.`,
    headers: { 'retry-after': retryAfter(decision.resetMs) },
  }
}

export function organisationRateLimited(decision: RateDecision, windowMs: number): Problem {
  return {
    code: 'rate_limited',
    detail:
      `Your organisation's keys together made ${decision.limit} requests in the last ${windowMs / 1000} seconds ` +
      `(the "organisation" policy in RateLimit-Policy); retry in ${retryAfter(decision.resetMs)} seconds.`,
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
  const state = keyState(record, now)
  return state === 'active' ? record : state === 'revoked' ? 'api_key_revoked' : 'api_key_expired'
}

export type Verdict =
  | { readonly admitted: true; readonly key: KeyRecord; readonly rate: RateState }
  /** `key` and `rate` are set when the refusal came after the key was identified. */
  | { readonly admitted: false; readonly problem: Problem; readonly key?: KeyRecord; readonly rate?: RateState }

export type MaybePromise<T> = T | Promise<T>

/** Calls `next` at once on a plain value, after it resolves on a promise. */
function then<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value)
}

export interface AdmissionOptions {
  keys: KeyCache
  usage: KeyUsage
  /** Requests per key. */
  limiter: RateLimiter
  /** Requests per organisation, all its keys together. */
  organisationLimiter: RateLimiter
  /** Failed authentications per client address. */
  authFailures: RateLimiter
  clock: Clock
}

export class Admission {
  readonly #options: AdmissionOptions
  /** Lookups in flight, by address and key hash. */
  readonly #pending = new Map<string, Promise<KeyRecord | Problem>>()

  constructor(options: AdmissionOptions) {
    this.#options = Object.freeze({ ...options })
  }

  /**
   * The whole decision for a request from `address` with this Authorization header. With
   * `storage: false` it returns undefined, having recorded nothing, where the key would need a
   * storage lookup (the fast path then hands the request to the router).
   */
  admit(address: string, authorization: string | undefined, options?: { storage: true }): MaybePromise<Verdict>
  admit(
    address: string,
    authorization: string | undefined,
    options: { storage: false },
  ): MaybePromise<Verdict> | undefined
  admit(
    address: string,
    authorization: string | undefined,
    options = { storage: true },
  ): MaybePromise<Verdict> | undefined {
    const { keys, authFailures } = this.#options
    const key = keyHashOf(authorization)
    const cached = typeof key === 'string' ? null : keys.cached(key.hash)
    if (cached === undefined && !options.storage) return undefined
    return then(authFailures.peek(address), (blocked): MaybePromise<Verdict> => {
      if (!blocked.allowed) return { admitted: false, problem: tooManyFailures(blocked) }
      if (typeof key === 'string') return this.#failed(address, key)
      if (cached !== undefined) return this.#identified(address, cached)
      return this.#lookUp(address, key.hash)
    })
  }

  /**
   * A key that needs storage. The failure it may turn out to be is reserved against the
   * address before the lookup starts, and given back if the key is valid. Requests from one
   * address with the same key share one lookup and one reservation, so a client opening many
   * connections with its key at once holds one slot, not one per request.
   */
  async #lookUp(address: string, hash: string): Promise<Verdict> {
    const id = `${address} ${hash}`
    let pending = this.#pending.get(id)
    if (pending === undefined) {
      pending = this.#reserveAndLookUp(address, hash).finally(() => this.#pending.delete(id))
      this.#pending.set(id, pending)
    }
    const found = await pending
    return 'code' in found ? { admitted: false, problem: found } : this.#limit(found)
  }

  async #reserveAndLookUp(address: string, hash: string): Promise<KeyRecord | Problem> {
    const reservation = await this.#options.authFailures.reserve(address)
    if (!reservation.allowed) return tooManyFailures(reservation)
    let record: KeyRecord | null
    try {
      record = await this.#options.keys.lookup(hash)
    } catch (error) {
      reservation.release()
      throw error
    }
    const usable = usableKey(record, this.#options.clock.now())
    // The reservation stands as the counted failure.
    if (typeof usable === 'string') return AUTH_FAILURES[usable]
    reservation.release()
    return usable
  }

  #identified(address: string, record: KeyRecord | null): MaybePromise<Verdict> {
    const usable = usableKey(record, this.#options.clock.now())
    return typeof usable === 'string' ? this.#failed(address, usable) : this.#limit(usable)
  }

  #failed(address: string, failure: AuthFailure): MaybePromise<Verdict> {
    return then(
      this.#options.authFailures.hit(address),
      (counted): Verdict => ({
        admitted: false,
        problem: counted.allowed ? AUTH_FAILURES[failure] : tooManyFailures(counted),
      }),
    )
  }

  #limit(key: KeyRecord): MaybePromise<Verdict> {
    const { limiter, organisationLimiter, usage } = this.#options
    return then(limiter.reserve(key.keyId), (own: Reservation): MaybePromise<Verdict> => {
      if (!own.allowed) {
        usage.count(key.keyId, true)
        return { admitted: false, problem: rateLimited(own, limiter.windowMs), key, rate: { key: own } }
      }
      return then(organisationLimiter.hit(key.organisation.id), (organisation): Verdict => {
        if (!organisation.allowed) {
          own.release()
          usage.count(key.keyId, true)
          const rate = { key: { ...own, remaining: own.remaining + 1 }, organisation }
          return {
            admitted: false,
            problem: organisationRateLimited(organisation, organisationLimiter.windowMs),
            key,
            rate,
          }
        }
        usage.count(key.keyId, false)
        const rate = { key: own, organisation }
        if (!key.organisation.active) return { admitted: false, problem: SUSPENDED, key, rate }
        return { admitted: true, key, rate }
      })
    })
  }
}
