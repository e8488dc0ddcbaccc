/**
 * GET /healthz: the process is up. GET /readyz: storage answers within the timeout, so a load
 * balancer can route around an instance that cannot serve student requests. Neither needs a key.
 */
import { Type } from 'typebox'
import { ProblemError } from '../../errors.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { LimiterStore } from '../../services/fallback-limiter.js'
import type { Limiters } from '../../services/limiters.js'
import type { Storage } from '../../storage/connection.js'
import type { TypedApp } from '../app-types.js'
import { problemResponses } from '../schemas/responses.js'

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function healthRoutes(
  app: TypedApp,
  deps: { storage: Storage; catalog: CatalogState; limiters: Limiters; timeoutMs: number },
): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        tags: ['Operations'],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'Alive.' }) },
      },
    },
    () => ({ status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: storage is reachable',
        tags: ['Operations'],
        security: [],
        response: {
          200: Type.Object(
            {
              status: Type.Literal('ready'),
              storage: Type.Object({ engine: Type.String(), status: Type.Literal('up') }),
              rateLimit: Type.Object(
                { store: Type.Unsafe<LimiterStore>({ type: 'string', enum: ['memory', 'redis', 'memory-fallback'] }) },
                {
                  description:
                    '`memory-fallback`: Redis is unreachable and this instance limits on its own until it returns.',
                },
              ),
              catalogVersion: Type.Integer(),
            },
            { description: 'Ready to serve.' },
          ),
          ...problemResponses(['storage_unavailable']),
        },
      },
    },
    async () => {
      try {
        await withTimeout(deps.storage.ping(), deps.timeoutMs)
      } catch (error) {
        throw new ProblemError(
          'storage_unavailable',
          'Storage does not answer; this instance cannot serve student requests.',
          {
            headers: { 'retry-after': '2' },
            cause: error,
          },
        )
      }
      return {
        status: 'ready' as const,
        storage: { engine: deps.storage.engine, status: 'up' as const },
        rateLimit: { store: deps.limiters.store() },
        catalogVersion: deps.catalog.current.version,
      }
    },
  )
}
