/**
 * Builds the two limiters: requests per key, and failed authentications per client address.
 * With REDIS_URL both live in Redis, shared by all instances (with a local fallback);
 * without it they live in this process.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import { type RateLimiter, SlidingWindowLimiter } from '../domain/sliding-window.js'
import { openRedis, whenReady } from '../storage/redis/redis-client.js'
import { RedisLimiter } from '../storage/redis/redis-limiter.js'
import { FallbackLimiter, type LimiterStore } from './fallback-limiter.js'

export interface Limiters {
  readonly requests: RateLimiter
  readonly authFailures: RateLimiter
  store(): LimiterStore
  /** Drops idle in-memory windows; called once a window. */
  sweep(): void
  close(): Promise<void>
}

export async function createLimiters(config: Config, clock: Clock, log: FastifyBaseLogger, redis?: Redis): Promise<Limiters> {
  const windowMs = config.rateLimitWindowSeconds * 1000
  const localRequests = new SlidingWindowLimiter({ limit: config.rateLimit, windowMs, clock })
  const localFailures = new SlidingWindowLimiter({ limit: config.authFailureLimit, windowMs, clock })
  const sweep = () => {
    localRequests.sweep()
    localFailures.sweep()
  }
  const client = redis ?? (config.redisUrl === undefined ? undefined : openRedis(config.redisUrl))
  if (client === undefined) {
    return { requests: localRequests, authFailures: localFailures, store: () => 'memory', sweep, close: async () => {} }
  }
  if (!(await whenReady(client))) log.warn('Redis is not reachable at start; rate limits are kept per instance until it is')
  const probe = () => client.ping()
  const requests = new FallbackLimiter({
    shared: new RedisLimiter({ redis: client, prefix: `${config.redisKeyPrefix}rate:`, limit: config.rateLimit, windowMs }),
    local: localRequests,
    probe,
    log,
    name: 'requests per key',
  })
  const authFailures = new FallbackLimiter({
    shared: new RedisLimiter({ redis: client, prefix: `${config.redisKeyPrefix}authfail:`, limit: config.authFailureLimit, windowMs }),
    local: localFailures,
    probe,
    log,
    name: 'failed authentications per address',
  })
  return {
    requests,
    authFailures,
    store: () => requests.store,
    sweep,
    async close() {
      requests.close()
      authFailures.close()
      // A client passed in belongs to the caller.
      if (redis === undefined) client.disconnect()
    },
  }
}
