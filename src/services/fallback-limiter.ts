/**
 * Uses the shared (Redis) limiter while it answers; when it does not, each instance falls back
 * to its own in-memory window, logs it once, reports it in /readyz, probes every second, and
 * returns to the shared limiter when Redis is back.
 *
 * The local window is never idle: it holds every hit this instance accepted, whichever store
 * decided, and a hit must fit there before Redis is asked. So one instance accepts at most the
 * limit in any window, and N instances at most N x the limit, also in a window that spans an
 * outage's start or end: an outage does not start the key from zero, and Redis coming back
 * empty (it keeps nothing on disk) does not either. While Redis answers, it alone keeps the
 * limit exact across instances; the local window only ever refuses what one instance alone
 * would overrun.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { RateDecision, RateLimiter, Reservation, SlidingWindowLimiter } from '../domain/sliding-window.js'

export type LimiterStore = 'redis' | 'memory' | 'memory-fallback'

/** Both reservations taken back at most once: callers may release after a store already did. */
function releasing(decision: RateDecision, ...reservations: Reservation[]): Reservation {
  let released = false
  return {
    ...decision,
    release: () => {
      if (released) return
      released = true
      for (const reservation of reservations) reservation.release()
    },
  }
}

export class FallbackLimiter implements RateLimiter {
  readonly limit: number
  readonly windowMs: number
  readonly #shared: RateLimiter
  readonly #local: SlidingWindowLimiter
  readonly #probe: () => Promise<unknown>
  readonly #log: FastifyBaseLogger
  readonly #probeMs: number
  readonly #name: string
  #healthy = true
  #timer: NodeJS.Timeout | undefined

  constructor(options: {
    shared: RateLimiter
    local: SlidingWindowLimiter
    probe: () => Promise<unknown>
    log: FastifyBaseLogger
    name: string
    probeMs?: number
  }) {
    this.limit = options.shared.limit
    this.windowMs = options.shared.windowMs
    this.#shared = options.shared
    this.#local = options.local
    this.#probe = options.probe
    this.#log = options.log
    this.#name = options.name
    this.#probeMs = options.probeMs ?? 1000
  }

  get store(): LimiterStore {
    return this.#healthy ? 'redis' : 'memory-fallback'
  }

  async hit(key: string, now?: number): Promise<RateDecision> {
    return this.reserve(key, now)
  }

  async peek(key: string, now?: number): Promise<RateDecision> {
    const local = this.#local.peek(key, now)
    if (!local.allowed || !this.#healthy) return local
    try {
      return await this.#shared.peek(key)
    } catch (error) {
      this.#degrade(error)
      return local
    }
  }

  async reserve(key: string, now?: number): Promise<Reservation> {
    const local = this.#local.reserve(key, now)
    if (!local.allowed || !this.#healthy) return local
    let shared: Reservation
    try {
      shared = await this.#shared.reserve(key)
    } catch (error) {
      this.#degrade(error)
      return local
    }
    if (shared.allowed) return releasing(shared, local, shared)
    local.release()
    return releasing(shared)
  }

  /**
   * Both limits in one call to the shared store while both limiters use it, each hit first
   * fitting its local window as in `reserve`; undefined when the store cannot take the pair
   * (the caller then takes the two steps). When the store does not answer, both fall back and
   * the local decisions stand.
   */
  reserveThenHit(
    key: string,
    other: RateLimiter,
    otherKey: string,
  ): Promise<[Reservation, RateDecision | undefined]> | undefined {
    if (!(other instanceof FallbackLimiter) || !this.#healthy || !other.#healthy) return undefined
    const own = this.#local.reserve(key)
    if (!own.allowed) return Promise.resolve([own, undefined])
    const theirs = other.#local.reserve(otherKey)
    // The caller takes its reservation back when the other limit refuses.
    if (!theirs.allowed) return Promise.resolve([releasing(own, own), theirs])
    const both = this.#shared.reserveThenHit?.(key, other.#shared, otherKey)
    if (both === undefined) {
      own.release()
      theirs.release()
      return undefined
    }
    return both.then(
      ([sharedOwn, sharedOther]): [Reservation, RateDecision | undefined] => {
        if (sharedOther === undefined) {
          own.release()
          theirs.release()
          return [releasing(sharedOwn), undefined]
        }
        if (!sharedOther.allowed) theirs.release()
        return [releasing(sharedOwn, own, sharedOwn), sharedOther]
      },
      (error: unknown): [Reservation, RateDecision | undefined] => {
        this.#degrade(error)
        other.#degrade(error)
        return [own, theirs]
      },
    )
  }

  /** Falls back now: Redis failed a check made outside this limiter (readiness). */
  unreachable(error: unknown): void {
    this.#degrade(error)
  }

  #degrade(error: unknown): void {
    if (!this.#healthy) return
    this.#healthy = false
    this.#log.warn(
      { err: error, limiter: this.#name },
      'Redis unreachable: rate limiting falls back to this instance alone',
    )
    this.#timer = setInterval(() => {
      this.#probe().then(
        () => {
          if (this.#healthy) return
          this.#healthy = true
          clearInterval(this.#timer)
          this.#timer = undefined
          this.#log.info({ limiter: this.#name }, 'Redis reachable again: rate limiting is shared again')
        },
        () => {},
      )
    }, this.#probeMs)
    this.#timer.unref()
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
  }
}
