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
import { waitFor } from '../support/wait-for.js'

const _silent = { warn: () => {}, info: () => {} } as unknown as FastifyBaseLogger

describe.skipIf(REDIS_URL === '')('RedisLimiter (shared Redis)', () => {
  const clients: Redis[] = []
  const prefix = `test:${randomBytes(4).toString('hex')}:`
  beforeAll(async () => {
    // A generous command timeout: a worker of a loaded suite can stall past the default 250 ms,
    // and these limiters have no fallback, so a late reply would fail the test, not the limit.
    for (let i = 0; i < 3; i++) clients.push(openRedis(REDIS_URL, { commandTimeoutMs: 10_000 }))
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

  describe('a key and its organisation in one call (reserveThenHit)', () => {
    const pair = (limit: number, otherLimit: number, redis = clients[0]!) => ({
      key: new RedisLimiter({ redis, prefix: `${prefix}pair-key:`, limit, windowMs: 60_000 }),
      organisation: new RedisLimiter({ redis, prefix: `${prefix}pair-org:`, limit: otherLimit, windowMs: 60_000 }),
    })

    it('counts both when both allow, and neither is asked twice', async () => {
      const { key, organisation } = pair(3, 5)
      const [own, org] = await key.reserveThenHit('k1', organisation, 'o1')!
      expect(own).toMatchObject({ allowed: true, limit: 3, remaining: 2 })
      expect(org).toMatchObject({ allowed: true, limit: 5, remaining: 4 })
      expect((await key.peek('k1')).remaining).toBe(2)
      expect((await organisation.peek('o1')).remaining).toBe(4)
      // A reservation both allowed can still be given back, as reserve's can.
      // The release is sent without being awaited: wait until Redis has it, not a fixed time.
      own.release()
      await waitFor(async () => (await key.peek('k1')).remaining === 3, {
        timeoutMs: 2000,
        what: 'the released hit given back',
      })
    })

    it('gives the key its hit back when the organisation refuses, and leaves the organisation alone when the key refuses', async () => {
      const { key, organisation } = pair(2, 1)
      expect((await key.reserveThenHit('k2', organisation, 'o2'))![1]!.allowed).toBe(true)
      const [own, org] = await key.reserveThenHit('k3', organisation, 'o2')!
      expect(own.allowed).toBe(true)
      expect(org).toMatchObject({ allowed: false, remaining: 0 })
      expect(org!.resetMs).toBeGreaterThan(59_000)
      expect((await key.peek('k3')).remaining).toBe(2)
      // The key's own limit refuses: its organisation is not asked and not counted.
      const fresh = pair(1, 10)
      await fresh.key.reserveThenHit('k4', fresh.organisation, 'o4')
      const [refused, notAsked] = await fresh.key.reserveThenHit('k4', fresh.organisation, 'o4')!
      expect(refused).toMatchObject({ allowed: false, remaining: 0 })
      expect(notAsked).toBeUndefined()
      expect((await fresh.organisation.peek('o4')).remaining).toBe(9)
    })

    it('admits exactly the organisation limit across three instances and many keys at once', async () => {
      const pairs = clients.map((redis) => pair(100, 50, redis))
      const results = await Promise.all(
        Array.from(
          { length: 150 },
          (_, i) => pairs[i % 3]!.key.reserveThenHit(`many-${i % 30}`, pairs[i % 3]!.organisation, 'o-many')!,
        ),
      )
      expect(results.filter(([, org]) => org?.allowed)).toHaveLength(50)
      // Every refused request's key hit was given back: the keys hold exactly the admitted ones.
      let held = 0
      for (let k = 0; k < 30; k++) held += 100 - (await pairs[0]!.key.peek(`many-${k}`)).remaining
      expect(held).toBe(50)
    })

    it('is not offered for a limiter on another connection: the caller takes two steps', () => {
      const { key } = pair(1, 1)
      const elsewhere = new RedisLimiter({ redis: clients[1]!, prefix, limit: 1, windowMs: 60_000 })
      expect(key.reserveThenHit('k', elsewhere, 'o')).toBeUndefined()
      expect(
        key.reserveThenHit('k', new SlidingWindowLimiter({ limit: 1, windowMs: 1000, clock: new ManualClock(0) }), 'o'),
      ).toBeUndefined()
    })
  })

  it('lets hits leave the window on Redis time', async () => {
    // Redis's clock cannot be injected; a short window keeps the wait short.
    const limiter = new RedisLimiter({ redis: clients[0]!, prefix, limit: 2, windowMs: 300 })
    const started = Date.now()
    expect((await limiter.hit('short')).allowed).toBe(true)
    expect((await limiter.hit('short')).allowed).toBe(true)
    expect((await limiter.hit('short')).allowed).toBe(false)
    // Until the first hit leaves (a look counts nothing), however long the machine takes to get there...
    await waitFor(async () => (await limiter.peek('short')).allowed, { timeoutMs: 5000, what: 'room in the window' })
    // ...and not before the window has passed: Redis's clock and this one are the machine's.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
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
      // The hit admitted through Redis counts in this instance's window too: the limit is reached.
      expect((await limiter.hit('k')).allowed).toBe(false)
      expect(warnings).toEqual(['Redis unreachable: rate limiting falls back to this instance alone'])
      await own.start()
      for (let i = 0; i < 100 && limiter.store !== 'redis'; i++) await new Promise((r) => setTimeout(r, 100))
      expect(limiter.store).toBe('redis')
      expect(warnings[1]).toBe('Redis reachable again: rate limiting is shared again')
      // The new Redis remembers nothing, but this instance's window still holds the key's hits.
      expect((await limiter.hit('k')).allowed).toBe(false)
      // Once they have left it, Redis decides again, from afresh.
      clock.advance(60_000)
      expect((await limiter.hit('k')).remaining).toBe(1)
      // Both limits in one call while Redis answers; when it stops, the local windows decide.
      const organisation = new FallbackLimiter({
        shared: new RedisLimiter({ redis, prefix: 'fallback-org:', limit: 2, windowMs: 60_000 }),
        local: new SlidingWindowLimiter({ limit: 2, windowMs: 60_000, clock }),
        probe: () => redis.ping(),
        log,
        name: 'test-org',
        probeMs: 100,
      })
      try {
        const [shared, sharedOrg] = await limiter.reserveThenHit('k', organisation, 'o')!
        expect([shared.allowed, sharedOrg?.allowed]).toEqual([true, true])
        await own.kill()
        const [localOwn, localOrg] = await limiter.reserveThenHit('fresh', organisation, 'o')!
        expect([localOwn.allowed, localOrg?.allowed]).toEqual([true, true])
        expect([limiter.store, organisation.store]).toEqual(['memory-fallback', 'memory-fallback'])
        // Now both fall back: the pair is taken in two local steps.
        expect(limiter.reserveThenHit('fresh', organisation, 'o')).toBeUndefined()
        const second = await organisation.hit('o')
        expect(second.allowed).toBe(false)
      } finally {
        organisation.close()
      }
    } finally {
      limiter.close()
      redis.disconnect()
      await own.kill()
    }
  })
})

describe.skipIf(!hasRedisServer())('two instances sharing a Redis that stops and comes back', () => {
  /** What admission does per request: the key's limit and its organisation's, in one step when it can. */
  async function admit(key: FallbackLimiter, organisation: FallbackLimiter): Promise<boolean> {
    const both = key.reserveThenHit('key', organisation, 'org')
    if (both !== undefined) {
      const [own, org] = await both
      if (org !== undefined && !org.allowed) own.release()
      return own.allowed && org?.allowed === true
    }
    const own = await key.reserve('key')
    if (!own.allowed) return false
    if ((await organisation.hit('org')).allowed) return true
    own.release()
    return false
  }

  it('lets a key through at most twice its limit in any window across the outage and the return', async () => {
    const own = new OwnRedis(await freePort())
    await own.start()
    // Local windows on an injected clock that stays inside one window; Redis keeps its own.
    const clock = new ManualClock(0)
    const clients = [0, 1].map(() => openRedis(own.url, { commandTimeoutMs: 200 }))
    const instances = clients.map((redis) => {
      const limiter = (prefix: string, limit: number) =>
        new FallbackLimiter({
          shared: new RedisLimiter({ redis, prefix, limit, windowMs: 60_000 }),
          local: new SlidingWindowLimiter({ limit, windowMs: 60_000, clock }),
          probe: () => redis.ping(),
          log: _silent,
          name: prefix,
          probeMs: 50,
        })
      return { key: limiter('outage-key:', 100), organisation: limiter('outage-org:', 1000) }
    })
    let accepted = 0
    const send = async (requests: number) => {
      for (let i = 0; i < requests; i++) {
        const instance = instances[i % 2]!
        if (await admit(instance.key, instance.organisation)) accepted++
      }
    }
    const stores = () => instances.flatMap((i) => [i.key.store, i.organisation.store])
    try {
      await Promise.all(clients.map((client) => whenReady(client)))
      await send(60)
      expect(accepted).toBe(60)
      await own.kill()
      // Each instance goes on from the 30 it admitted through Redis: 70 more each, not 100.
      await send(300)
      expect(stores()).toEqual(Array(4).fill('memory-fallback'))
      expect(accepted).toBe(200)
      // Redis is back and remembers nothing; the window still holds what each instance admitted.
      await own.start()
      for (let i = 0; i < 100 && stores().some((store) => store !== 'redis'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50))
      expect(stores()).toEqual(Array(4).fill('redis'))
      await send(100)
      expect(accepted).toBe(200)
      // A window after the outage is Redis's alone again: exactly the limit across both.
      clock.advance(60_000)
      accepted = 0
      await send(150)
      expect(accepted).toBe(100)
    } finally {
      for (const instance of instances) {
        instance.key.close()
        instance.organisation.close()
      }
      for (const client of clients) client.disconnect()
      await own.kill()
    }
  })
})
