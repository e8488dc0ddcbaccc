/**
 * The Redis connection for state shared by instances. Commands fail fast while Redis is away
 * (no offline queue, a short command timeout) so a request never waits on it: the caller falls
 * back and the client keeps reconnecting in the background.
 */
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

// Loaded only when REDIS_URL is set: a single-process deployment starts sooner without it.
const requireModule = createRequire(import.meta.url)

export function openRedis(url: string, options: { commandTimeoutMs?: number } = {}): Redis {
  const { Redis: RedisClient } = requireModule('ioredis') as typeof import('ioredis')
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 250,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    lazyConnect: false,
  })
  // Connection errors are expected during an outage and are reported by the users of the
  // client; without a listener ioredis would print each reconnect attempt.
  redis.on('error', () => {})
  return redis
}

/**
 * Resolves once the client is ready, or after `timeoutMs` whatever its state: a Redis that is
 * down at start must not stop the service from starting (the limiters fall back meanwhile).
 */
export function whenReady(redis: Redis, timeoutMs = 2000): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady)
      resolve(false)
    }, timeoutMs)
    const onReady = () => {
      clearTimeout(timer)
      resolve(true)
    }
    redis.once('ready', onReady)
  })
}
