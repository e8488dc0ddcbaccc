/**
 * What stands between the dashboard's password forms and scrypt:
 *
 * - failed sign-ins are throttled per (account, address) pair and per address, with a delay
 *   that doubles (domain/backoff-throttle.ts), never per account alone: five wrong passwords
 *   from anywhere used to lock the operator out for 15 minutes, and now lock out only the
 *   address that sent them;
 * - each attempt is reserved before anything is awaited, so concurrent attempts cannot get past
 *   the limit together;
 * - at most HASH_CONCURRENCY password hashes run at once, a few more wait, and an address has at
 *   most one in either state (domain/concurrency-gate.ts): a flood from one address is refused
 *   at once and leaves the slots free for everybody else.
 *
 * The throttles live in this process, so a reservation is one synchronous step. With REDIS_URL
 * the shared windows of services/limiters.ts are checked and fed too, a ceiling across
 * instances (SIGN_IN_FAILURE_LIMIT per pair, four times that per address, in 15 minutes).
 */
import type { Clock } from '../clock.js'
import { BackoffThrottle, type BackoffPolicy } from '../domain/backoff-throttle.js'
import { addressKey } from '../domain/client-address.js'
import { ConcurrencyGate } from '../domain/concurrency-gate.js'
import type { Limiters } from '../services/limiters.js'
import { DashboardError } from './dashboard-error.js'
import { waitOf } from './times.js'

/**
 * scrypt at N=2^15 takes 32 MiB and holds a libuv thread for a noticeable time. Two at once
 * leave two of libuv's four threads to file and DNS work, and a short queue keeps the wait
 * behind them short (figures: docs/performance.md).
 */
export const HASH_CONCURRENCY = 2
export const HASH_QUEUE = 8

const MINUTE = 60_000

/** After the free failures: 1, 2, 4, 8 then 15 minutes between attempts; forgotten after an hour. */
const DELAYS = { baseDelayMs: MINUTE, maxDelayMs: 15 * MINUTE, forgetAfterMs: 60 * MINUTE } as const

/** A reserved sign-in attempt; settle it once (later calls do nothing). */
export interface SignInAttempt {
  /** With REDIS_URL: also refused if the windows shared by all instances are full (429). */
  checkShared(): Promise<void>
  fail(): Promise<void>
  /** The right password: this pair's failures are forgotten (not the address's). */
  succeed(): void
  cancel(): void
}

export interface SignInGuard {
  /**
   * Reserves a sign-in attempt for `email` from this address, synchronously, before anything
   * is awaited; throws the 429 page (with Retry-After) when the pair or the address must wait.
   */
  reserve(email: string, ip: string): SignInAttempt
  /** Runs a password hash for this address through the gate; throws 429 or 503 if it does not fit. */
  hash<T>(ip: string, task: () => Promise<T>): Promise<T>
}

export function createSignInGuard(options: { clock: Clock; limiters: Limiters }): SignInGuard {
  const { limiters } = options
  const freeFailures = limiters.signInFailuresByPair.limit
  const perPair = new BackoffThrottle({
    clock: options.clock,
    policy: { freeAttempts: freeFailures, ...DELAYS } satisfies BackoffPolicy,
  })
  // An address may mistype for several accounts (a shared office address), but not for many.
  const perAddress = new BackoffThrottle({
    clock: options.clock,
    policy: { freeAttempts: limiters.signInFailuresByAddress.limit, ...DELAYS },
  })
  const gate = new ConcurrencyGate({ concurrency: HASH_CONCURRENCY, queue: HASH_QUEUE, perKey: 1 })
  // Alone, this process's throttles decide; the shared windows (SIGN_IN_WINDOW_MS) add a
  // ceiling across instances, which in-memory copies of them would only duplicate.
  const shared =
    limiters.store() === 'memory'
      ? undefined
      : { pair: limiters.signInFailuresByPair, address: limiters.signInFailuresByAddress }

  return {
    reserve(email, ip) {
      const address = addressKey(ip)
      // No address is longer than 254 characters (RFC 5321): a longer one names no account,
      // and must not cost more memory than one.
      const pairKey = `${email.slice(0, 255)}\n${address}`
      const pair = perPair.reserve([pairKey])
      if (!pair.allowed) tooManyAttempts(pair.retryAfterMs)
      const byAddress = perAddress.reserve([address])
      if (!byAddress.allowed) {
        pair.attempt.cancel()
        tooManyAttempts(byAddress.retryAfterMs)
      }
      return {
        async checkShared() {
          if (shared === undefined) return
          const [p, a] = await Promise.all([shared.pair.peek(pairKey), shared.address.peek(address)])
          if (!p.allowed || !a.allowed) tooManyAttempts(Math.max(p.allowed ? 0 : p.resetMs, a.allowed ? 0 : a.resetMs))
        },
        async fail() {
          pair.attempt.fail()
          byAddress.attempt.fail()
          if (shared !== undefined) await Promise.all([shared.pair.hit(pairKey), shared.address.hit(address)])
        },
        succeed() {
          pair.attempt.succeed([pairKey])
          byAddress.attempt.succeed()
        },
        cancel() {
          pair.attempt.cancel()
          byAddress.attempt.cancel()
        },
      }
    },
    hash(ip, task) {
      const entry = gate.run(addressKey(ip), task)
      if ('refused' in entry) {
        if (entry.refused === 'key-busy') {
          throw new DashboardError(
            429,
            'One at a time',
            'A password from your address is being checked already. Wait for its answer, then try again.',
            { 'retry-after': '1' },
          )
        }
        throw new DashboardError(
          503,
          'Busy',
          'Too many passwords are being checked right now. Try again in a moment.',
          { 'retry-after': '2' },
        )
      }
      return entry.result
    },
  }
}

/** The 429 page, saying how long to wait (Retry-After in seconds, RFC 9110 section 10.2.3). */
export function tooManyAttempts(retryAfterMs: number): never {
  const wait = waitOf(retryAfterMs)
  throw new DashboardError(
    429,
    'Too many attempts',
    `Too many attempts from your address. Try again in ${wait.text}.`,
    {
      'retry-after': String(wait.seconds),
    },
  )
}
