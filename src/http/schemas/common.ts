/**
 * Shared schemas. Each is written once and used to validate, to serialize, to type handlers
 * and to generate the OpenAPI document.
 */
import { type Static, Type } from 'typebox'
import { PROBLEM_CODES } from '../../errors.js'
import { TIER_IDS, type TierId } from '../../domain/tiers.js'
import { ReadinessChecksSchema } from './health.js'

/** A tier id; `description` says what this particular one means. */
export function tierId(description = 'Tier identifier.') {
  return Type.Unsafe<TierId>({ type: 'string', enum: [...TIER_IDS], description })
}

export const TierIdSchema = tierId()

export const UuidSchema = Type.String({
  format: 'uuid',
  description: 'A UUID, e.g. `0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42`.',
  examples: ['0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42'],
})

export const TimestampSchema = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC timestamp with milliseconds.',
  examples: ['2026-03-01T14:05:09.123Z'],
})

export const FieldProblemSchema = Type.Object(
  {
    in: Type.Unsafe<'path' | 'query' | 'header' | 'body'>({
      type: 'string',
      enum: ['path', 'query', 'header', 'body'],
      description: 'Where the problem is.',
    }),
    field: Type.String({ description: 'Parameter name, or a JSON pointer into the body (`""` is the body itself).' }),
    detail: Type.String({ description: 'What is wrong, in words a developer can act on.' }),
  },
  { additionalProperties: false },
)

export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      description: 'URI reference documenting the problem type.',
      examples: ['/docs/errors#rate_limited'],
    }),
    title: Type.String({ description: 'Short summary of the problem type; the same for every occurrence.' }),
    status: Type.Integer({ description: 'The HTTP status code.' }),
    detail: Type.String({ description: 'What went wrong this time, and what to do about it.' }),
    code: Type.Unsafe<string>({ type: 'string', enum: PROBLEM_CODES, description: 'Stable machine-readable code.' }),
    requestId: Type.String({ description: 'Identifier of this request; also in the `X-Request-Id` header.' }),
    errors: Type.Optional(
      Type.Array(FieldProblemSchema, { description: 'Each validation problem (code `invalid_request`).' }),
    ),
    checks: Type.Optional(ReadinessChecksSchema),
  },
  {
    $id: 'Problem',
    title: 'Problem',
    additionalProperties: false,
    description: 'An RFC 9457 problem details object, sent as `application/problem+json`.',
  },
)

export type ProblemBody = Static<typeof ProblemSchema>
