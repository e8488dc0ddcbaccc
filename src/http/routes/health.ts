/**
 * Health for load balancers and orchestrators; none needs a key.
 *
 * - GET /livez: the process is up and its event loop turns. It touches nothing else, so that a
 *   database outage never gets every instance restarted at once. GET /healthz is the same answer,
 *   kept for set-ups that use it.
 * - GET /readyz: this instance can serve student requests: storage answers within the timeout,
 *   the database lists exactly the migrations this code knows, and the rate limits have a store
 *   (Redis, or memory when Redis is unreachable: still ready, and named in the body).
 */
import { ProblemError } from '../../errors.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { Limiters } from '../../services/limiters.js'
import type { Storage } from '../../storage/connection.js'
import { type MigrationState, migrationState } from '../../storage/migrate.js'
import type { TypedApp } from '../app-types.js'
import { LivenessSchema, type MigrationsCheck, type ReadinessChecks, ReadinessSchema } from '../schemas/health.js'
import { problemResponses } from '../schemas/responses.js'

/** Seconds a load balancer might wait before asking again. */
const RETRY_AFTER_SECONDS = '2'

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function migrationsCheck(state: MigrationState): MigrationsCheck {
  if (state.unknown.length > 0) return 'newer'
  return state.pending.length > 0 ? 'pending' : 'current'
}

/** The detail of a 503 for migrations that are not current: which, and what to do. */
function migrationsDetail(state: MigrationState): string {
  if (state.unknown.length > 0)
    return (
      `The database lists migrations this instance's code does not know (${state.unknown.join(', ')}): ` +
      'a newer version migrated it. Upgrade this instance, or restore a backup taken before that upgrade.'
    )
  return (
    `The database has not applied migrations this instance's code needs (${state.pending.join(', ')}). ` +
    'Run `curriculum migrate` or restart the instance, which migrates at start.'
  )
}

export function healthRoutes(
  app: TypedApp,
  deps: { storage: Storage; catalog: CatalogState; limiters: Limiters; timeoutMs: number },
): void {
  const liveness = {
    schema: {
      summary: 'Liveness: the process is up',
      description:
        'Answers 200 as long as the process runs; it touches no storage. Restart the instance only when ' +
        'this fails.',
      tags: ['Operations'],
      security: [],
      response: { 200: LivenessSchema },
    },
  }
  app.get('/livez', { ...liveness, schema: { ...liveness.schema, operationId: 'getLiveness' } }, () => ({
    status: 'ok' as const,
  }))
  app.get(
    '/healthz',
    {
      ...liveness,
      schema: {
        ...liveness.schema,
        operationId: 'getHealth',
        summary: 'Liveness (the same as /livez)',
      },
    },
    () => ({ status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: storage reachable, migrations current, a rate-limit store in use',
        description:
          'Answers 200 when this instance can serve student requests, 503 (problem+json, `checks` names the ' +
          'failing check) when it cannot: take it out of rotation, do not restart it.',
        tags: ['Operations'],
        security: [],
        response: { 200: ReadinessSchema, ...problemResponses(['storage_unavailable', 'not_ready']) },
      },
    },
    async () => {
      const rateLimit = await deps.limiters.checkStore()
      const refuse = (
        code: 'storage_unavailable' | 'not_ready',
        detail: string,
        checks: ReadinessChecks,
        cause?: unknown,
      ) =>
        new ProblemError(code, detail, {
          headers: { 'retry-after': RETRY_AFTER_SECONDS },
          extensions: { checks },
          cause,
        })
      let state: MigrationState
      try {
        await withTimeout(deps.storage.ping(), deps.timeoutMs)
        state = await withTimeout(migrationState(deps.storage), deps.timeoutMs)
      } catch (error) {
        throw refuse(
          'storage_unavailable',
          'Storage does not answer; this instance cannot serve student requests.',
          { storage: 'down', migrations: 'unchecked', rateLimit },
          error,
        )
      }
      const migrations = migrationsCheck(state)
      if (migrations !== 'current')
        throw refuse('not_ready', migrationsDetail(state), { storage: 'up', migrations, rateLimit })
      return {
        status: 'ready' as const,
        storage: { engine: deps.storage.engine, status: 'up' as const },
        migrations: { status: 'current' as const, applied: state.applied.length },
        rateLimit: { store: rateLimit },
        catalogVersion: deps.catalog.current.version,
      }
    },
  )
}
