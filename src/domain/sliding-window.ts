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
  /**
   * Records a hit if it is allowed; a refused hit is not recorded. `now`, in every method, is
   * the caller's reading of the limiter's clock, when it has one (saves a reading; a shared
   * store keeps its own time and ignores it).
   */
  hit(key: string, now?: number): RateDecision | Promise<RateDecision>
  /** The decision a hit would get now, without recording anything. */
  peek(key: string, now?: number): RateDecision | Promise<RateDecision>
  /**
   * A hit that can be taken back: decided and recorded in one step (so concurrent callers
   * cannot all pass a check made before they count), then released if what it stood for did
   * not happen (a key lookup that found a valid key; a request another limit refused).
   */
  reserve(key: string, now?: number): Reservation | Promise<Reservation>
  /**
   * `reserve(key)`, then, only if that is allowed, `other.hit(otherKey)`, the reservation taken
   * back when the hit is refused: in one step where the store can take it so (one Redis script
   * for the key's and its organisation's limits), undefined where it cannot (the caller takes
   * the two steps). The second decision is undefined when the reservation was refused.
   */
  reserveThenHit?(
    key: string,
    other: RateLimiter,
    otherKey: string,
  ): Promise<[Reservation, RateDecision | undefined]> | undefined
}

export interface Reservation extends RateDecision {
  /** Takes the recorded hit back; does nothing if the hit was refused. */
  release(): void
}

/** A limiter that decides at once, in this process: what a caller that cannot wait (the fast path) needs. */
export interface SyncRateLimiter extends RateLimiter {
  hit(key: string, now?: number): RateDecision
  peek(key: string, now?: number): RateDecision
  reserve(key: string, now?: number): Reservation
}

/**
 * A decision of the in-memory limiter, releasable when it recorded a hit. One object per
 * decision, with `release` a method rather than a closure: the fast path takes several of
 * these per request.
 */
class LocalDecision implements Reservation {
  constructor(
    readonly allowed: boolean,
    readonly limit: number,
    readonly remaining: number,
    readonly resetMs: number,
    /** The limiter and key whose hit `release` takes back; undefined when nothing was recorded. */
    readonly logs: HitLogs | undefined,
    readonly key: string,
    readonly at: number,
  ) {}

  release(): void {
    if (this.logs === undefined) return
    // By key: a sweep may have given the key's slot to another key meanwhile.
    const slot = this.logs.slot(this.key)
    if (slot !== -1) this.logs.removeLatest(slot, this.at)
  }
}

export class SlidingWindowLimiter implements SyncRateLimiter {
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

  hit(key: string, now = this.#clock.now()): RateDecision {
    return this.#decide(key, true, now)
  }

  peek(key: string, now = this.#clock.now()): RateDecision {
    return this.#decide(key, false, now)
  }

  reserve(key: string, now = this.#clock.now()): Reservation {
    return this.#decide(key, true, now)
  }

  #decide(key: string, record: boolean, now: number): LocalDecision {
    const logs = this.#logs
    const slot = logs.slot(key)
    if (slot === -1) {
      if (!record) return new LocalDecision(true, this.limit, this.limit, 0, undefined, key, now)
      logs.add(key, now)
      return new LocalDecision(true, this.limit, this.limit - 1, this.windowMs, logs, key, now)
    }
    const held = logs.expire(slot, now - this.windowMs)
    const allowed = held < this.limit
    const recorded = allowed && record
    if (recorded) logs.push(slot, now)
    const oldest = logs.oldest(slot)
    return new LocalDecision(
      allowed,
      this.limit,
      Math.max(0, this.limit - (recorded ? held + 1 : held)),
      oldest === undefined ? 0 : oldest + this.windowMs - now,
      recorded ? logs : undefined,
      key,
      now,
    )
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
