/**
 * An exact sliding-log limiter: at most `limit` hits accepted per key in ANY window of
 * `windowMs` (the interval (now - windowMs, now]), not in fixed clock buckets. Each key keeps
 * the times of its accepted hits, at most `limit` of them (in HitLogs: one typed array for all
 * keys), so memory is bounded by the number of keys active within one window; idle keys are
 * dropped by `sweep`.
 */
import type { Clock } from '../clock.js'
import { HitLogs } from './hit-logs.js'

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Hits still accepted right now, after this one. */
  readonly remaining: number
  /** Ms until `remaining` grows by one (the oldest hit in the window leaves it); 0 if none is held. */
  readonly resetMs: number
}

/** What the HTTP layer needs of a limiter; a shared (Redis) store implements the same. */
export interface RateLimiter {
  readonly limit: number
  readonly windowMs: number
  /** Records a hit if it is allowed; a refused hit is not recorded. */
  hit(key: string): RateDecision | Promise<RateDecision>
  /** The decision a hit would get now, without recording anything. */
  peek(key: string): RateDecision | Promise<RateDecision>
  /**
   * A hit that can be taken back: decided and recorded in one step (so concurrent callers
   * cannot all pass a check made before they count), then released if what it stood for did
   * not happen (a key lookup that found a valid key; a request another limit refused).
   */
  reserve(key: string): Reservation | Promise<Reservation>
}

export interface Reservation extends RateDecision {
  /** Takes the recorded hit back; does nothing if the hit was refused. */
  release(): void
}

const NOTHING_TO_RELEASE = () => {}

export class SlidingWindowLimiter implements RateLimiter {
  readonly limit: number
  readonly windowMs: number
  readonly #clock: Clock
  readonly #logs: HitLogs

  constructor(options: { limit: number; windowMs: number; clock: Clock }) {
    if (!Number.isInteger(options.limit) || options.limit < 1) throw new RangeError('limit must be a positive integer')
    if (!(options.windowMs > 0)) throw new RangeError('windowMs must be positive')
    this.limit = options.limit
    this.windowMs = options.windowMs
    this.#clock = options.clock
    this.#logs = new HitLogs(options.limit)
  }

  hit(key: string): RateDecision {
    return this.#decide(key, true)
  }

  peek(key: string): RateDecision {
    return this.#decide(key, false)
  }

  reserve(key: string): Reservation {
    const decision = this.#decide(key, true)
    if (!decision.allowed) return { ...decision, release: NOTHING_TO_RELEASE }
    const at = this.#clock.now()
    return {
      ...decision,
      release: () => {
        // By key, not slot: a sweep may have given the slot to another key meanwhile.
        const slot = this.#logs.slot(key)
        if (slot !== -1) this.#logs.removeLatest(slot, at)
      },
    }
  }

  #decide(key: string, record: boolean): RateDecision {
    const now = this.#clock.now()
    const logs = this.#logs
    const slot = logs.slot(key)
    if (slot === -1) {
      if (!record) return { allowed: true, limit: this.limit, remaining: this.limit, resetMs: 0 }
      logs.add(key, now)
      return { allowed: true, limit: this.limit, remaining: this.limit - 1, resetMs: this.windowMs }
    }
    const held = logs.expire(slot, now - this.windowMs)
    const allowed = held < this.limit
    if (allowed && record) logs.push(slot, now)
    const heldAfter = allowed && record ? held + 1 : held
    const oldest = logs.oldest(slot)
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - heldAfter),
      resetMs: oldest === undefined ? 0 : oldest + this.windowMs - now,
    }
  }

  /** Forgets keys with no hit inside the window; call periodically. */
  sweep(): void {
    this.#logs.sweep(this.#clock.now() - this.windowMs)
  }

  /** Number of keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#logs.size
  }
}
