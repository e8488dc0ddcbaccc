/**
 * Failed attempts per key with a delay that doubles, instead of a lock: after `freeAttempts`
 * failures, the next attempt must wait `baseDelayMs` after the last failure, the one after that
 * twice as long, and so on up to `maxDelayMs`. A key's failures are forgotten `forgetAfterMs`
 * after its last one.
 *
 * An attempt is reserved synchronously, before the caller awaits anything (a password hash, a
 * query), and counts as a failure until it is settled otherwise. So N concurrent attempts can
 * never get past the limit together: the attacks that sent 30 sign-ins at once got 30 guesses
 * instead of 5, because each had checked the count before any of them had failed.
 */
import type { Clock } from '../clock.js'

export interface BackoffPolicy {
  /** Failures accepted before any delay. */
  readonly freeAttempts: number
  /** Delay after the first failure beyond the free ones; it doubles with each further failure. */
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** A key is forgotten this long after its last failure. */
  readonly forgetAfterMs: number
}

interface Entry {
  failures: number
  lastFailureAt: number
  /** Attempts reserved and not yet settled. */
  pending: number
}

/** A reserved attempt; settle it exactly once (further calls do nothing). */
export interface Attempt {
  /** The attempt failed: it counts, and the next delay grows. */
  fail(): void
  /** The attempt succeeded: it does not count, and `resetKeys` lose their failures. */
  succeed(resetKeys?: readonly string[]): void
  /** The attempt was not made after all (e.g. refused for another reason): it does not count. */
  cancel(): void
}

export type Reservation =
  | { readonly allowed: true; readonly attempt: Attempt }
  | { readonly allowed: false; readonly retryAfterMs: number }

export class BackoffThrottle {
  readonly policy: BackoffPolicy
  readonly #clock: Clock
  readonly #entries = new Map<string, Entry>()
  #reservations = 0

  constructor(options: { policy: BackoffPolicy; clock: Clock }) {
    const { freeAttempts, baseDelayMs, maxDelayMs, forgetAfterMs } = options.policy
    if (!Number.isInteger(freeAttempts) || freeAttempts < 1)
      throw new RangeError('freeAttempts must be a positive integer')
    if (!(baseDelayMs > 0 && maxDelayMs >= baseDelayMs && forgetAfterMs >= maxDelayMs))
      throw new RangeError('need 0 < baseDelayMs <= maxDelayMs <= forgetAfterMs')
    this.policy = Object.freeze({ ...options.policy })
    this.#clock = options.clock
  }

  /**
   * Reserves one attempt on every key, or on none: refused if any key is over its budget.
   *
   * @example
   * const r = throttle.reserve([`pair:${email}|${address}`, `address:${address}`])
   * if (!r.allowed) return tooMany(r.retryAfterMs)
   * try { ok ? r.attempt.succeed() : r.attempt.fail() } finally { r.attempt.cancel() }
   */
  reserve(keys: readonly string[]): Reservation {
    if (++this.#reservations % 1024 === 0) this.sweep()
    const now = this.#clock.now()
    let wait = 0
    for (const key of keys) wait = Math.max(wait, this.#waitFor(key, now))
    if (wait > 0) return { allowed: false, retryAfterMs: wait }
    const entries = keys.map((key) => this.#entry(key))
    for (const entry of entries) entry.pending++
    let settled = false
    const settle = (how: 'fail' | 'succeed' | 'cancel', resetKeys: readonly string[] = []) => {
      if (settled) return
      settled = true
      const at = this.#clock.now()
      for (const entry of entries) {
        entry.pending--
        if (how === 'fail') {
          entry.failures++
          entry.lastFailureAt = at
        }
      }
      if (how === 'succeed') {
        for (const key of resetKeys) {
          const entry = this.#entries.get(key)
          if (entry !== undefined) entry.failures = 0
        }
      }
    }
    return {
      allowed: true,
      attempt: {
        fail: () => settle('fail'),
        succeed: (resetKeys) => settle('succeed', resetKeys),
        cancel: () => settle('cancel'),
      },
    }
  }

  /** Ms until `key` may make an attempt; 0 if it may now. */
  #waitFor(key: string, now: number): number {
    const entry = this.#entries.get(key)
    if (entry === undefined) return 0
    if (entry.pending === 0 && now - entry.lastFailureAt >= this.policy.forgetAfterMs) {
      this.#entries.delete(key)
      return 0
    }
    const { freeAttempts, baseDelayMs, maxDelayMs } = this.policy
    const used = entry.failures + entry.pending
    if (used < freeAttempts) return 0
    const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(30, used - freeAttempts))
    // Beyond the free attempts, one at a time: an attempt still running may yet fail.
    if (entry.pending > 0) return Math.max(delay, 1000)
    return Math.max(0, entry.lastFailureAt + delay - now)
  }

  #entry(key: string): Entry {
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      entry = { failures: 0, lastFailureAt: 0, pending: 0 }
      this.#entries.set(key, entry)
    }
    return entry
  }

  /** Forgets keys with nothing pending and no failure within `forgetAfterMs`. */
  sweep(): void {
    const cutoff = this.#clock.now() - this.policy.forgetAfterMs
    for (const [key, entry] of this.#entries)
      if (entry.pending === 0 && entry.lastFailureAt <= cutoff) this.#entries.delete(key)
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#entries.size
  }
}
