/**
 * The admission decision (admission.ts) taken at once, for the fast path, which cannot wait:
 * the router's steps in the same order, with limiters kept in this process.
 */
import type { SyncRateLimiter } from '../../domain/sliding-window.js'
import {
  type AdmissionOptions,
  afterBothLimits,
  failedVerdict,
  identify,
  ownLimitRefused,
  tooManyFailures,
  usableKey,
  type Verdict,
} from '../admission.js'

/** Admission's options with limiters that decide at once (kept in this process). */
export interface LocalAdmissionOptions extends AdmissionOptions {
  limiter: SyncRateLimiter
  organisationLimiter: SyncRateLimiter
  authFailures: SyncRateLimiter
}

/** The three limits the fast path needs kept in this process (services/limiters.ts: `Limiters.inProcess`). */
export type InProcessLimits = Pick<LocalAdmissionOptions, 'limiter' | 'organisationLimiter' | 'authFailures'>

/** The decision, or undefined, having recorded nothing, where the key needs a storage lookup. */
export class LocalAdmission {
  readonly #options: LocalAdmissionOptions

  constructor(options: LocalAdmissionOptions) {
    this.#options = Object.freeze({ ...options })
  }

  /** The decision, with the identified key's client noted for its last use (services/key-usage.ts). */
  admit(address: string, authorization: string | undefined, now: number, userAgent?: string): Verdict | undefined {
    const verdict = this.#decide(address, authorization, now)
    if (verdict?.key !== undefined) this.#options.usage.noteClient(verdict.key.keyId, address, userAgent)
    return verdict
  }

  #decide(address: string, authorization: string | undefined, now: number): Verdict | undefined {
    const options = this.#options
    const who = identify(options.keys, authorization, now)
    if ('hash' in who) return undefined
    const blocked = options.authFailures.peek(address, now)
    if (!blocked.allowed) return { admitted: false, problem: tooManyFailures(blocked) }
    const usable = 'failure' in who ? who.failure : usableKey(who.cached, now)
    if (typeof usable === 'string') return failedVerdict(options.authFailures.hit(address, now), usable)
    const own = options.limiter.reserve(usable.keyId, now)
    if (!own.allowed) return ownLimitRefused(options, usable, own, now)
    return afterBothLimits(options, usable, own, options.organisationLimiter.hit(usable.organisation.id, now), now)
  }
}
