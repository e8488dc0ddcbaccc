/**
 * The sliding-log limiter kept in Redis, shared by every instance: one sorted set of accepted
 * hit times per key. Each decision is one script call, atomic inside Redis, and uses Redis's own
 * clock (TIME), so instances whose clocks disagree still share one exact window.
 */
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { RateDecision, RateLimiter, Reservation } from '../../domain/sliding-window.js'

// One decision on one log, shared by both scripts. Scores are ms; a hit at `now` counts while
// its score > now - window, as in memory. Returns allowed (1|0), hits still accepted, ms until
// the oldest leaves.
const DECIDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function decide(key, limit, window, record, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local held = redis.call('ZCARD', key)
  local allowed = 0
  if held < limit then
    allowed = 1
    if record then
      redis.call('ZADD', key, now, member)
      redis.call('PEXPIRE', key, window)
      held = held + 1
    end
  end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local reset = 0
  if oldest[2] then reset = tonumber(oldest[2]) + window - now end
  return allowed, limit - held, reset
end
`

// KEYS[1]: the log. ARGV: limit, window ms, record (1|0), a member unique to this hit.
const SLIDING_HIT = `${DECIDE}
return {decide(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4])}
`

// Two logs in one call: a reservation on KEYS[1], then, only if it is allowed, a hit on KEYS[2];
// when that hit is refused, the reservation is taken back. ARGV: limit, window ms and member of
// each. Returns the first decision, then the second (allowed -1 when it was not asked).
const SLIDING_RESERVE_THEN_HIT = `${DECIDE}
local a1, r1, s1 = decide(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), true, ARGV[3])
if a1 == 0 then return {a1, r1, s1, -1, 0, 0} end
local a2, r2, s2 = decide(KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]), true, ARGV[6])
if a2 == 0 then redis.call('ZREM', KEYS[1], ARGV[3]) end
return {a1, r1, s1, a2, r2, s2}
`

/** A script's answer for one log as a decision of the limiter whose `limit` it is. */
function decisionOf(allowed: number, limit: number, remaining: number, resetMs: number): RateDecision {
  return { allowed: allowed === 1, limit, remaining: Math.max(0, remaining), resetMs: Math.max(0, resetMs) }
}

type SlidingReserveThenHit = (
  key: string,
  otherKey: string,
  limit: number,
  windowMs: number,
  member: string,
  otherLimit: number,
  otherWindowMs: number,
  otherMember: string,
) => Promise<[number, number, number, number, number, number]>

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
  readonly #redis: Redis & { curriculumSlidingHit?: SlidingHit; curriculumReserveThenHit?: SlidingReserveThenHit }
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
    if (this.#redis.curriculumReserveThenHit === undefined) {
      this.#redis.defineCommand('curriculumReserveThenHit', { numberOfKeys: 2, lua: SLIDING_RESERVE_THEN_HIT })
    }
  }

  /**
   * `reserve(key)`, then, when allowed, `other.hit(otherKey)` in the same script: one round trip
   * instead of two for every request that both limits see. Undefined when `other` is not a
   * limiter on the same Redis connection (the caller then takes the two steps itself).
   */
  reserveThenHit(
    key: string,
    other: RateLimiter,
    otherKey: string,
  ): Promise<[Reservation, RateDecision | undefined]> | undefined {
    if (!(other instanceof RedisLimiter) || other.#redis !== this.#redis) return undefined
    return this.#reserveThenHit(key, other, otherKey)
  }

  async #reserveThenHit(
    key: string,
    other: RedisLimiter,
    otherKey: string,
  ): Promise<[Reservation, RateDecision | undefined]> {
    const member = this.#member()
    const [allowed, remaining, resetMs, otherAllowed, otherRemaining, otherResetMs] = await this.#redis
      .curriculumReserveThenHit!(
      this.#prefix + key,
      other.#prefix + otherKey,
      this.limit,
      this.windowMs,
      member,
      other.limit,
      other.windowMs,
      other.#member(),
    )
    const own = decisionOf(allowed, this.limit, remaining, resetMs)
    if (otherAllowed === -1) return [{ ...own, release: () => {} }, undefined]
    const decision = decisionOf(otherAllowed, other.limit, otherRemaining, otherResetMs)
    // Refused by the other limit: the script has taken this reservation back already.
    const release = decision.allowed
      ? () => void this.#redis.zrem(this.#prefix + key, member).catch(() => {})
      : () => {}
    return [{ ...own, release }, decision]
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
    return decisionOf(allowed, this.limit, remaining, resetMs)
  }
}
