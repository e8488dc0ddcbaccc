/**
 * The sliding-log limiter kept in Redis, shared by every instance: one sorted set of accepted
 * hit times per key. Each decision is one script call, atomic inside Redis, and uses Redis's own
 * clock (TIME), so instances whose clocks disagree still share one exact window.
 */
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { RateDecision, RateLimiter, Reservation } from '../../domain/sliding-window.js'

// KEYS[1]: the log. ARGV: limit, window ms, record (1|0), a member unique to this hit.
// Scores are ms; a hit at `now` counts while its score > now - window, as in memory.
const SLIDING_HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local held = redis.call('ZCARD', KEYS[1])
local allowed = 0
if held < limit then
  allowed = 1
  if ARGV[3] == '1' then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], window)
    held = held + 1
  end
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = 0
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {allowed, limit - held, reset}
`

type SlidingHit = (
  key: string,
  limit: number,
  windowMs: number,
  record: '1' | '0',
  member: string,
) => Promise<[number, number, number]>

export class RedisLimiter implements RateLimiter {
  readonly limit: number
  readonly windowMs: number
  readonly #redis: Redis & { curriculumSlidingHit?: SlidingHit }
  readonly #prefix: string
  /** Unique per instance; with a counter it makes every member unique without coordination. */
  readonly #instance = randomBytes(6).toString('base64url')
  #sequence = 0

  constructor(options: { redis: Redis; prefix: string; limit: number; windowMs: number }) {
    this.limit = options.limit
    this.windowMs = options.windowMs
    this.#prefix = options.prefix
    this.#redis = options.redis
    if (this.#redis.curriculumSlidingHit === undefined) {
      // ioredis sends EVALSHA and falls back to EVAL once if the script is not cached yet.
      this.#redis.defineCommand('curriculumSlidingHit', { numberOfKeys: 1, lua: SLIDING_HIT })
    }
  }

  hit(key: string): Promise<RateDecision> {
    return this.#call(key, '1')
  }

  peek(key: string): Promise<RateDecision> {
    return this.#call(key, '0')
  }

  async reserve(key: string): Promise<Reservation> {
    const member = this.#member()
    const decision = await this.#call(key, '1', member)
    if (!decision.allowed) return { ...decision, release: () => {} }
    return {
      ...decision,
      // Best effort: should Redis be gone, the hit expires with its window anyway.
      release: () => void this.#redis.zrem(this.#prefix + key, member).catch(() => {}),
    }
  }

  #member(): string {
    return `${this.#instance}:${(this.#sequence = (this.#sequence + 1) % 1e9)}`
  }

  async #call(key: string, record: '1' | '0', member = this.#member()): Promise<RateDecision> {
    const [allowed, remaining, resetMs] = await this.#redis.curriculumSlidingHit!(
      this.#prefix + key,
      this.limit,
      this.windowMs,
      record,
      member,
    )
    return {
      allowed: allowed === 1,
      limit: this.limit,
      remaining: Math.max(0, remaining),
      resetMs: Math.max(0, resetMs),
    }
  }
}
