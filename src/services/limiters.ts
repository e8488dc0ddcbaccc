/**
 * Builds the service's limiters: requests per key, failed API authentications per client
 * address, failed dashboard sign-ins per (account, address) pair and per address, and dashboard sign-ups
 * and password reset requests per address. With REDIS_URL they live
 * in Redis, shared by all instances (each with a local fallback); without it, in this process.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import { type RateLimiter, SlidingWindowLimiter, type SyncRateLimiter } from '../domain/sliding-window.js'
import { openRedis, whenReady } from '../storage/redis/redis-client.js'
import { RedisLimiter } from '../storage/redis/redis-limiter.js'
import { FallbackLimiter, type LimiterStore } from './fallback-limiter.js'

export interface Limiters {
  /** The API's three limits when they are kept in this process, and so answer at once; undefined in Redis. */
  readonly inProcess:
    | {
        readonly limiter: SyncRateLimiter
        readonly organisationLimiter: SyncRateLimiter
        readonly authFailures: SyncRateLimiter
      }
    | undefined
  readonly requests: RateLimiter
  /** All of an organisation's keys together: more keys do not multiply the per-key limit. */
  readonly organisationRequests: RateLimiter
  readonly authFailures: RateLimiter
  readonly signInFailuresByPair: RateLimiter
  readonly signInFailuresByAddress: RateLimiter
  readonly signUpsByAddress: RateLimiter
  readonly passwordResetsByAddress: RateLimiter
  store(): LimiterStore
  /**
   * The store after asking Redis (a ping within its command timeout) while it is believed up, so
   * that readiness never names Redis while it is unreachable and no request has found out yet.
   */
  checkStore(): Promise<LimiterStore>
  /** Drops idle in-memory windows; called once a window. */
  sweep(): void
  close(): Promise<void>
}

/** Dashboard sign-in failures are counted over a longer window than API requests. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000

/** Each sign-up creates an account: SIGN_UP_LIMIT of them per address per hour. */
export const SIGN_UP_WINDOW_MS = 60 * 60_000

interface Spec {
  name: keyof Omit<Limiters, 'inProcess' | 'store' | 'checkStore' | 'sweep' | 'close'>
  /** Redis key part, and what the log calls it. */
  key: string
  label: string
  limit: number
  windowMs: number
}

/** Each limiter of a store, under its name. */
function byName<L extends RateLimiter>(of: (name: Spec['name']) => L): Record<Spec['name'], L> {
  return {
    requests: of('requests'),
    organisationRequests: of('organisationRequests'),
    authFailures: of('authFailures'),
    signInFailuresByPair: of('signInFailuresByPair'),
    signInFailuresByAddress: of('signInFailuresByAddress'),
    signUpsByAddress: of('signUpsByAddress'),
    passwordResetsByAddress: of('passwordResetsByAddress'),
  }
}

export async function createLimiters(
  config: Config,
  clock: Clock,
  log: FastifyBaseLogger,
  redis?: Redis,
): Promise<Limiters> {
  const windowMs = config.rateLimitWindowSeconds * 1000
  const specs: Spec[] = [
    { name: 'requests', key: 'rate', label: 'requests per key', limit: config.rateLimit, windowMs },
    {
      name: 'organisationRequests',
      key: 'orgrate',
      label: 'requests per organisation',
      limit: config.organisationRateLimit,
      windowMs,
    },
    {
      name: 'authFailures',
      key: 'authfail',
      label: 'failed authentications per address',
      limit: config.authFailureLimit,
      windowMs,
    },
    {
      name: 'signInFailuresByPair',
      key: 'signin:pair',
      label: 'failed sign-ins per account and address',
      limit: config.signInFailureLimit,
      windowMs: SIGN_IN_WINDOW_MS,
    },
    {
      name: 'signInFailuresByAddress',
      key: 'signin:address',
      label: 'failed sign-ins per address',
      limit: config.signInFailureLimit * 4,
      windowMs: SIGN_IN_WINDOW_MS,
    },
    {
      name: 'signUpsByAddress',
      key: 'signup:address',
      label: 'sign-ups per address',
      limit: config.signUpLimit,
      windowMs: SIGN_UP_WINDOW_MS,
    },
    {
      name: 'passwordResetsByAddress',
      key: 'reset:address',
      label: 'password reset requests per address',
      limit: config.passwordResetLimit,
      windowMs: SIGN_UP_WINDOW_MS,
    },
  ]
  const local = new Map(
    specs.map((spec) => [spec.name, new SlidingWindowLimiter({ limit: spec.limit, windowMs: spec.windowMs, clock })]),
  )
  const sweep = () => {
    for (const limiter of local.values()) limiter.sweep()
  }
  const client =
    redis ??
    (config.redisUrl === undefined
      ? undefined
      : openRedis(config.redisUrl, { commandTimeoutMs: config.redisCommandTimeoutMs }))
  if (client === undefined) {
    const of = (name: Spec['name']) => local.get(name)!
    return {
      inProcess: {
        limiter: of('requests'),
        organisationLimiter: of('organisationRequests'),
        authFailures: of('authFailures'),
      },
      ...byName(of),
      store: () => 'memory',
      checkStore: async () => 'memory',
      sweep,
      close: async () => {},
    }
  }
  if (!(await whenReady(client)))
    log.warn('Redis is not reachable at start; rate limits are kept per instance until it is')
  const probe = () => client.ping()
  const shared = new Map(
    specs.map((spec) => [
      spec.name,
      new FallbackLimiter({
        shared: new RedisLimiter({
          redis: client,
          prefix: `${config.redisKeyPrefix}${spec.key}:`,
          limit: spec.limit,
          windowMs: spec.windowMs,
        }),
        local: local.get(spec.name)!,
        probe,
        log,
        name: spec.label,
      }),
    ]),
  )
  const of = (name: Spec['name']) => shared.get(name)!
  return {
    inProcess: undefined,
    ...byName(of),
    store: () => of('requests').store,
    async checkStore() {
      const requests = of('requests')
      if (requests.store === 'redis') await client.ping().catch((error: unknown) => requests.unreachable(error))
      return requests.store
    },
    sweep,
    async close() {
      for (const limiter of shared.values()) limiter.close()
      // A client passed in belongs to the caller.
      if (redis === undefined) client.disconnect()
    },
  }
}
