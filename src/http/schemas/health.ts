/**
 * What the health endpoints answer: liveness, readiness, and the checks readiness is made of
 * (also the `checks` member of its 503 problem).
 */
import { type Static, Type } from 'typebox'
import type { LimiterStore } from '../../services/fallback-limiter.js'

export const LivenessSchema = Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up.' })

const limiterStore = (description: string) =>
  Type.Unsafe<LimiterStore>({ type: 'string', enum: ['memory', 'redis', 'memory-fallback'], description })

export type MigrationsCheck = 'current' | 'pending' | 'newer'

export const ReadinessChecksSchema = Type.Object(
  {
    storage: Type.Unsafe<'up' | 'down'>({
      type: 'string',
      enum: ['up', 'down'],
      description: '`down`: the database did not answer within `STORAGE_TIMEOUT_MS`.',
    }),
    migrations: Type.Unsafe<MigrationsCheck | 'unchecked'>({
      type: 'string',
      enum: ['current', 'pending', 'newer', 'unchecked'],
      description:
        '`current`: the database lists exactly the migrations this code knows; `pending`: some are not ' +
        'applied (run `curriculum migrate`, or restart); `newer`: it lists migrations this code does not ' +
        'know (a newer version migrated it); `unchecked`: storage is down.',
    }),
    rateLimit: limiterStore(
      'Where rate limits are kept: `redis`, `memory` (no `REDIS_URL`), or `memory-fallback` (Redis is ' +
        'unreachable and this instance limits on its own until it returns; still ready).',
    ),
  },
  { additionalProperties: false, description: 'Each readiness check (`/readyz` only).' },
)

export type ReadinessChecks = Static<typeof ReadinessChecksSchema>

export const ReadinessSchema = Type.Object(
  {
    status: Type.Literal('ready'),
    storage: Type.Object({ engine: Type.String(), status: Type.Literal('up') }),
    migrations: Type.Object({
      status: Type.Literal('current'),
      applied: Type.Integer({ description: 'How many migrations the database lists (all this code knows).' }),
    }),
    rateLimit: Type.Object(
      { store: limiterStore('Where rate limits are kept.') },
      {
        description: '`memory-fallback`: Redis is unreachable and this instance limits on its own until it returns.',
      },
    ),
    catalogVersion: Type.Integer(),
  },
  { description: 'Ready to serve.' },
)
