/**
 * Uses the shared (Redis) limiter while it answers; when it does not, each instance falls back
 * to its own in-memory window, logs it once, reports it in /readyz, probes every second, and
 * returns to the shared limiter when Redis is back. During the outage the limit holds per
 * instance (at most N x the limit across N instances): availability is kept over exactness.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { RateDecision, RateLimiter, Reservation } from '../domain/sliding-window.js'

export type LimiterStore = 'redis' | 'memory' | 'memory-fallback'

export class FallbackLimiter implements RateLimiter {
  readonly limit: number
  readonly windowMs: number
  readonly #shared: RateLimiter
  readonly #local: RateLimiter
  readonly #probe: () => Promise<unknown>
  readonly #log: FastifyBaseLogger
  readonly #probeMs: number
  readonly #name: string
  #healthy = true
  #timer: NodeJS.Timeout | undefined

  constructor(options: {
    shared: RateLimiter
    local: RateLimiter
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

  hit(key: string): Promise<RateDecision> {
    return this.#decide(key, 'hit')
  }

  peek(key: string): Promise<RateDecision> {
    return this.#decide(key, 'peek')
  }

  reserve(key: string): Promise<Reservation> {
    return this.#decide(key, 'reserve')
  }

  /**
   * Both limits in one call to the shared store while both limiters use it; undefined otherwise
   * (or when the store does not answer: both then fall back, and the caller takes the two steps
   * on the local windows).
   */
  reserveThenHit(
    key: string,
    other: RateLimiter,
    otherKey: string,
  ): Promise<[Reservation, RateDecision | undefined]> | undefined {
    if (!(other instanceof FallbackLimiter) || !this.#healthy || !other.#healthy) return undefined
    const both = this.#shared.reserveThenHit?.(key, other.#shared, otherKey)
    if (both === undefined) return undefined
    return both.catch(async (error: unknown): Promise<[Reservation, RateDecision | undefined]> => {
      this.#degrade(error)
      other.#degrade(error)
      const own = await this.#local.reserve(key)
      if (!own.allowed) return [own, undefined]
      const decision = await other.#local.hit(otherKey)
      if (!decision.allowed) own.release()
      return [own, decision]
    })
  }

  async #decide(key: string, how: 'hit' | 'peek'): Promise<RateDecision>
  async #decide(key: string, how: 'reserve'): Promise<Reservation>
  async #decide(key: string, how: 'hit' | 'peek' | 'reserve'): Promise<RateDecision | Reservation> {
    if (this.#healthy) {
      try {
        return await this.#shared[how](key)
      } catch (error) {
        this.#degrade(error)
      }
    }
    return this.#local[how](key)
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
