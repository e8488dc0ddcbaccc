/**
 * Redis goes away under two instances (a redis-server of the test's own, never the shared one)
 * and comes back empty: every request is still answered, and a key gets at most twice its
 * limit in any window across the two, the window that spans the outage and the return included.
 */
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { bearer, createTestStorage, START, seedFixtures, testConfig } from '../helper.js'
import { freePort, hasRedisServer, OwnRedis } from '../support/services.js'

describe.skipIf(!hasRedisServer())('Redis outage under two instances', () => {
  it('lets a 100/min key through at most 200 times in the window of the outage, and 100 in the next', async () => {
    const redis = new OwnRedis(await freePort())
    await redis.start()
    const storage = await createTestStorage()
    const clock = new ManualClock(START)
    const fixtures = await seedFixtures(storage, clock.now())
    const config = testConfig({ REDIS_URL: redis.url, RATE_LIMIT: '100', REDIS_COMMAND_TIMEOUT_MS: '200' })
    // Each instance has its own Redis connection and its own local windows, on one clock.
    const apps = [
      await buildApp({ config, storage, clock, logger: false, pollChanges: false }),
      await buildApp({ config, storage, clock, logger: false, pollChanges: false }),
    ]
    const statuses: number[] = []
    const send = async (requests: number) => {
      for (let i = 0; i < requests; i++) {
        const res = await apps[i % 2]!.inject({ url: '/api/v1/tiers', headers: bearer(fixtures.keys.catalog) })
        statuses.push(res.statusCode)
      }
    }
    const accepted = () => statuses.filter((status) => status === 200).length
    const stores = async () =>
      Promise.all(apps.map(async (app) => (await app.inject({ url: '/readyz' })).json().rateLimit.store))
    try {
      await send(60)
      expect(accepted()).toBe(60)
      await redis.kill()
      await send(300)
      expect(await stores()).toEqual(['memory-fallback', 'memory-fallback'])
      // 30 through Redis and 70 alone on each instance; the issue measured 260 here.
      expect(accepted()).toBe(200)
      await redis.start()
      for (let i = 0; i < 100 && (await stores()).some((store) => store !== 'redis'); i++)
        await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await stores()).toEqual(['redis', 'redis'])
      await send(100)
      expect(accepted()).toBe(200)
      expect(new Set(statuses.slice(60))).toEqual(new Set([200, 429]))
      clock.advance(60_000)
      statuses.length = 0
      await send(150)
      expect(accepted()).toBe(100)
    } finally {
      for (const app of apps) await app.close()
      await storage.close()
      await redis.kill()
    }
  })
})
