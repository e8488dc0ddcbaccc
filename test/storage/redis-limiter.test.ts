/**
 * The shared limiter in a real Redis: atomic under concurrency from several clients, on Redis's
 * clock, and the fallback when Redis really stops.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '../../src/clock.js'
import { SlidingWindowLimiter } from '../../src/domain/sliding-window.js'
import { FallbackLimiter } from '../../src/services/fallback-limiter.js'
import { openRedis, whenReady } from '../../src/storage/redis/redis-client.js'
import { RedisLimiter } from '../../src/storage/redis/redis-limiter.js'
import { freePort, hasRedisServer, OwnRedis, REDIS_URL } from '../support/services.js'

const _silent = { warn: () => {}, info: () => {} } as unknown as FastifyBaseLogger

describe.skipIf(REDIS_URL === '')('RedisLimiter (shared Redis)', () => {
  const clients: Redis[] = []
  const prefix = `test:${randomBytes(4).toString('hex')}:`
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) clients.push(openRedis(REDIS_URL))
    await Promise.all(clients.map((client) => whenReady(client)))
  })
  afterAll(async () => {
    const keys = await clients[0]!.keys(`${prefix}*`)
    if (keys.length > 0) await clients[0]!.del(...keys)
    for (const client of clients) client.disconnect()
  })

  it('accepts exactly the limit when three instances hit one key at once', async () => {
    const limiters = clients.map((redis) => new RedisLimiter({ redis, prefix, limit: 100, windowMs: 60_000 }))
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % 3]!.hit('one-key')))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100)
    const refused = decisions.find((d) => !d.allowed)!
    expect(refused.remaining).toBe(0)
    expect(refused.resetMs).toBeGreaterThan(59_000)
    expect(refused.resetMs).toBeLessThanOrEqual(60_000)
  })

  it('counts remaining down and reports when the oldest hit leaves', async () => {
    const limiter = new RedisLimiter({ redis: clients[0]!, prefix, limit: 3, windowMs: 10_000 })
    const first = await limiter.hit('countdown')
    expect(first).toMatchObject({ allowed: true, remaining: 2, limit: 3 })
    expect(first.resetMs).toBeGreaterThan(9_000)
    expect((await limiter.hit('countdown')).remaining).toBe(1)
    expect((await limiter.peek('countdown')).remaining).toBe(1)
    expect((await limiter.hit('countdown')).remaining).toBe(0)
    expect((await limiter.hit('countdown')).allowed).toBe(false)
    expect((await limiter.peek('countdown')).allowed).toBe(false)
  })

  it('lets hits leave the window on Redis time', async () => {
    // Redis's clock cannot be injected; a short window keeps the wait short.
    const limiter = new RedisLimiter({ redis: clients[0]!, prefix, limit: 2, windowMs: 300 })
    expect((await limiter.hit('short')).allowed).toBe(true)
    expect((await limiter.hit('short')).allowed).toBe(true)
    expect((await limiter.hit('short')).allowed).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 350))
    expect((await limiter.hit('short')).allowed).toBe(true)
    // The key expires with its window, so idle keys cost Redis nothing.
    expect(await clients[0]!.pttl(`${prefix}short`)).toBeLessThanOrEqual(300)
  })
})

describe.skipIf(!hasRedisServer())('FallbackLimiter against a Redis that really stops', () => {
  it('falls back to the local window, and returns to Redis when it is back', async () => {
    const own = new OwnRedis(await freePort())
    await own.start()
    const redis = openRedis(own.url, { commandTimeoutMs: 200 })
    await whenReady(redis)
    const clock = new ManualClock(0)
    const warnings: string[] = []
    const log = {
      warn: (_: unknown, msg: string) => warnings.push(msg),
      info: (_: unknown, msg: string) => warnings.push(msg),
    } as unknown as FastifyBaseLogger
    const limiter = new FallbackLimiter({
      shared: new RedisLimiter({ redis, prefix: 'fallback:', limit: 2, windowMs: 60_000 }),
      local: new SlidingWindowLimiter({ limit: 2, windowMs: 60_000, clock }),
      probe: () => redis.ping(),
      log,
      name: 'test',
      probeMs: 100,
    })
    try {
      expect((await limiter.hit('k')).allowed).toBe(true)
      expect(limiter.store).toBe('redis')
      await own.kill()
      // The next decisions come from this process, within the command timeout.
      const started = Date.now()
      expect((await limiter.hit('k')).allowed).toBe(true)
      expect(Date.now() - started).toBeLessThan(2000)
      expect(limiter.store).toBe('memory-fallback')
      expect((await limiter.hit('k')).allowed).toBe(true)
      expect((await limiter.hit('k')).allowed).toBe(false)
      expect(warnings).toEqual(['Redis unreachable: rate limiting falls back to this instance alone'])
      await own.start()
      for (let i = 0; i < 100 && limiter.store !== 'redis'; i++) await new Promise((r) => setTimeout(r, 100))
      expect(limiter.store).toBe('redis')
      expect(warnings[1]).toBe('Redis reachable again: rate limiting is shared again')
      // The new Redis remembers nothing: the key starts afresh there.
      expect((await limiter.hit('k')).remaining).toBe(1)
    } finally {
      limiter.close()
      redis.disconnect()
      await own.kill()
    }
  })
})
