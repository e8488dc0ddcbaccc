/**
 * Who may call the API: one decision, taken in the same order for the router's hook
 * (access-control.ts) and the fast path (fast/index.ts), which only write the answer.
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
 * `Admission` takes it for the router, synchronously when the limiters and the key cache can give
 * it so and as a promise otherwise; the fast path takes it at once with the same steps
 * (fast/local-admission.ts).
 */
import type { Clock } from '../clock.js'
import { hasApiKeyShape, hasValidChecksum, hashApiKey, type KeyRecord, keyState } from '../domain/api-key.js'
import type { RateDecision, RateLimiter, Reservation } from '../domain/sliding-window.js'
import type { Problem } from '../errors.js'
import type { KeyCache } from '../services/key-cache.js'
import type { KeyUsage } from '../services/key-usage.js'
import type { RateState } from './rate-limit-headers.js'

export const REALM = 'curriculum-api'

// RFC 6750 2.1: credentials = "Bearer" 1*SP b68token; the scheme is case-insensitive (RFC 9110 11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
/** What nearly every request sends: one test instead of parsing the header, then the token's shape. */
const PLAIN_BEARER = /^Bearer cur_(?:live|test)_[0-9A-Za-z]{38}$/
const PLAIN_TOKEN_START = 'Bearer '.length

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

/**
 * Refusals that depend on a limit and a retry time, built once per (limit, window, seconds)
 * and then reused: the same object every time lets problemJson reuse its serialized body. A
 * window of 60 s leaves at most 60 per kind.
 */
function memoized(build: (limit: number, windowMs: number, retry: string) => Problem) {
  const built = new Map<string, Problem>()
  return (decision: RateDecision, windowMs = 0): Problem => {
    const retry = retryAfter(decision.resetMs)
    const id = `${decision.limit} ${windowMs} ${retry}`
    let problem = built.get(id)
    if (problem === undefined) {
      problem = build(decision.limit, windowMs, retry)
      built.set(id, problem)
    }
    return problem
  }
}

export const tooManyFailures: (blocked: RateDecision) => Problem = memoized((_limit, _windowMs, retry) => ({
  code: 'too_many_failed_authentications',
  detail: `Too many requests from your address failed authentication; retry in ${retry} seconds.`,
  headers: { 'retry-after': retry },
}))

export const rateLimited: (decision: RateDecision, windowMs: number) => Problem = memoized(
  (limit, windowMs, retry) => ({
    code: 'rate_limited',
    detail: `This key made ${limit} requests in the last ${windowMs / 1000} seconds; retry in ${retry} seconds.`,
    headers: { 'retry-after': retry },
  }),
)

export const organisationRateLimited: (decision: RateDecision, windowMs: number) => Problem = memoized(
  (limit, windowMs, retry) => ({
    code: 'rate_limited',
    detail:
      `Your organisation's keys together made ${limit} requests in the last ${windowMs / 1000} seconds ` +
      `(the "organisation" policy in RateLimit-Policy); retry in ${retry} seconds.`,
    headers: { 'retry-after': retry },
  }),
)

/**
 * The hash of the key an Authorization header carries, or why it carries none that can be used.
 * Checks the key's shape only; whether its checksum matches is asked of `hasValidChecksum`
 * when the key cache does not know the hash (a cached key was issued here, so its checksum is
 * right), which keeps a mistyped or invented key away from storage without a CRC on every
 * request.
 */
export function keyHashOf(header: string | undefined): { hash: string; token: string } | AuthFailure {
  if (header === undefined) return 'api_key_missing'
  if (PLAIN_BEARER.test(header)) {
    const plain = header.slice(PLAIN_TOKEN_START)
    return { hash: hashApiKey(plain), token: plain }
  }
  const token = BEARER.exec(header)?.[1]
  if (token === undefined) return /^bearer\b/i.test(header) ? 'api_key_invalid' : 'api_key_missing'
  if (!hasApiKeyShape(token)) return 'api_key_invalid'
  return { hash: hashApiKey(token), token }
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

/**
 * Step 2 as far as it goes without storage: why the header carries no usable key, or the key as
 * the key cache knows it (null: known not to exist), or the hash storage must be asked about.
 */
export type Identification =
  | { readonly failure: AuthFailure }
  | { readonly cached: KeyRecord | null }
  | { readonly hash: string }

export function identify(keys: KeyCache, authorization: string | undefined, now: number): Identification {
  const key = keyHashOf(authorization)
  if (typeof key === 'string') return { failure: key }
  const cached = keys.cached(key.hash, now)
  if (cached !== undefined) return { cached }
  return hasValidChecksum(key.token) ? { hash: key.hash } : { failure: 'api_key_invalid' }
}

/** Step 3 when the key's own limit refused: counted as throttled, the organisation's limit untouched. */
export function ownLimitRefused(options: AdmissionOptions, key: KeyRecord, own: Reservation, now: number): Verdict {
  options.usage.count(key.keyId, true, now)
  return { admitted: false, problem: rateLimited(own, options.limiter.windowMs), key, rate: { key: own } }
}

/** Steps 3 and 4 once both limits have decided. */
export function afterBothLimits(
  options: AdmissionOptions,
  key: KeyRecord,
  own: Reservation,
  organisation: RateDecision,
  now: number,
): Verdict {
  if (!organisation.allowed) {
    own.release()
    options.usage.count(key.keyId, true, now)
    const rate = { key: releasedDecision(own), organisation }
    return {
      admitted: false,
      problem: organisationRateLimited(organisation, options.organisationLimiter.windowMs),
      key,
      rate,
    }
  }
  options.usage.count(key.keyId, false, now)
  const rate = { key: own, organisation }
  if (!key.organisation.active) return { admitted: false, problem: SUSPENDED, key, rate }
  return { admitted: true, key, rate }
}

/**
 * The decision for the router: synchronous where the limiters and the key cache can give it so,
 * a promise otherwise.
 */
export class Admission {
  readonly #options: AdmissionOptions
  /** Lookups in flight, by address and key hash. */
  readonly #pending = new Map<string, Promise<KeyRecord | Problem>>()

  constructor(options: AdmissionOptions) {
    this.#options = Object.freeze({ ...options })
  }

  /**
   * The whole decision for a request from `address` with this Authorization header; `now` is
   * the caller's reading of the clock, when it has one (every step of a synchronous decision
   * uses that one reading).
   */
  admit(address: string, authorization: string | undefined, now = this.#options.clock.now()): MaybePromise<Verdict> {
    const who = identify(this.#options.keys, authorization, now)
    // The synchronous path (in-memory limiters, a cached key) allocates no closures.
    const blocked = this.#options.authFailures.peek(address, now)
    if (blocked instanceof Promise)
      return blocked.then((decision) => this.#afterPeek(decision, address, who, this.#now()))
    return this.#afterPeek(blocked, address, who, now)
  }

  #now(): number {
    return this.#options.clock.now()
  }

  #afterPeek(blocked: RateDecision, address: string, who: Identification, now: number): MaybePromise<Verdict> {
    if (!blocked.allowed) return { admitted: false, problem: tooManyFailures(blocked) }
    if ('failure' in who) return this.#failed(address, who.failure, now)
    if ('cached' in who) return this.#identified(address, who.cached, now)
    return this.#lookUp(address, who.hash)
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
    return 'code' in found ? { admitted: false, problem: found } : this.#limit(found, this.#now())
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
    const usable = usableKey(record, this.#now())
    // The reservation stands as the counted failure.
    if (typeof usable === 'string') return AUTH_FAILURES[usable]
    reservation.release()
    return usable
  }

  #identified(address: string, record: KeyRecord | null, now: number): MaybePromise<Verdict> {
    const usable = usableKey(record, now)
    return typeof usable === 'string' ? this.#failed(address, usable, now) : this.#limit(usable, now)
  }

  #failed(address: string, failure: AuthFailure, now: number): MaybePromise<Verdict> {
    const counted = this.#options.authFailures.hit(address, now)
    return counted instanceof Promise
      ? counted.then((decision) => failedVerdict(decision, failure))
      : failedVerdict(counted, failure)
  }

  /** The key's own limit, then its organisation's (see the module comment, step 3). */
  #limit(key: KeyRecord, now: number): MaybePromise<Verdict> {
    const { limiter, organisationLimiter } = this.#options
    // Both limits in one step where the store can (one Redis round trip instead of two).
    const both = limiter.reserveThenHit?.(key.keyId, organisationLimiter, key.organisation.id)
    if (both !== undefined) {
      return both.then(([own, organisation]) =>
        organisation === undefined
          ? this.#afterOwnLimit(key, own, this.#now())
          : afterBothLimits(this.#options, key, own, organisation, this.#now()),
      )
    }
    const own = limiter.reserve(key.keyId, now)
    return own instanceof Promise
      ? own.then((decision) => this.#afterOwnLimit(key, decision, this.#now()))
      : this.#afterOwnLimit(key, own, now)
  }

  #afterOwnLimit(key: KeyRecord, own: Reservation, now: number): MaybePromise<Verdict> {
    if (!own.allowed) return ownLimitRefused(this.#options, key, own, now)
    const organisation = this.#options.organisationLimiter.hit(key.organisation.id, now)
    return organisation instanceof Promise
      ? organisation.then((decision) => afterBothLimits(this.#options, key, own, decision, this.#now()))
      : afterBothLimits(this.#options, key, own, organisation, now)
  }
}

export function failedVerdict(counted: RateDecision, failure: AuthFailure): Verdict {
  return { admitted: false, problem: counted.allowed ? AUTH_FAILURES[failure] : tooManyFailures(counted) }
}

/** What the key's limit says once its reserved hit was given back. */
function releasedDecision(own: RateDecision): RateDecision {
  return { allowed: own.allowed, limit: own.limit, remaining: own.remaining + 1, resetMs: own.resetMs }
}
