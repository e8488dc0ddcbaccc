/**
 * GET /api/v1/tiers, /api/v1/lessons[?tier=][&standard=] and /api/v1/lessons/:slug, served from
 * the representations computed at import (see catalog-representations.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { SLUG } from '../../domain/slug.js'
import { isStandardReference } from '../../domain/standard-reference.js'
import { ProblemError } from '../../errors.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { TypedApp } from '../app-types.js'
import {
  type CatalogRepresentations,
  lessonsWithStandard,
  matchesIfNoneMatch,
  type Representation,
} from '../catalog-representations.js'
import { LessonsQuerySchema } from '../schemas/catalog.js'
import { notFoundProblem } from '../problem-responses.js'
import {
  AUTHENTICATED_PROBLEMS,
  ETAG_HEADER,
  jsonResponse,
  NOT_MODIFIED,
  problemResponses,
} from '../schemas/responses.js'

const IF_NONE_MATCH = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({ description: 'An ETag from an earlier response; a match answers 304 with no body.' }),
  ),
})

function send(request: FastifyRequest, reply: FastifyReply, representation: Representation): FastifyReply {
  reply.header('etag', representation.etag).header('cache-control', 'private, no-cache')
  if (matchesIfNoneMatch(request.headers['if-none-match'], representation.etag)) return reply.code(304).send()
  return reply.type('application/json; charset=utf-8').send(representation.body)
}

function badStandard(value: string): ProblemError {
  const detail =
    "must be a framework's code such as 1B-AP-08 (letters, digits, '.', '-', '_' and ':') " +
    'or a CASE identifier (a UUID)'
  return new ProblemError(
    'invalid_request',
    `The standard "${value.slice(0, 64)}" is neither a standard's code nor a CASE identifier: it ${detail}.`,
    { errors: [{ in: 'query', field: 'standard', detail }] },
  )
}

export function catalogRoutes(app: TypedApp, catalog: CatalogState<CatalogRepresentations>): void {
  app.get(
    '/tiers',
    {
      schema: {
        operationId: 'listTiers',
        summary: 'List all curriculum tiers',
        tags: ['Catalog'],
        headers: IF_NONE_MATCH,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: jsonResponse('TierList', 'The tiers, in catalog order.', ETAG_HEADER),
          304: NOT_MODIFIED,
          ...problemResponses(AUTHENTICATED_PROBLEMS),
        },
      },
    },
    (request, reply) => send(request, reply, catalog.current.tiers),
  )

  app.get(
    '/lessons',
    {
      schema: {
        operationId: 'listLessons',
        summary: 'List lessons',
        description:
          "All lessons, or with `tier` only that tier's, with `standard` only those aligned to that standard (a " +
          "framework's code or its CASE identifier), in catalog order. `total` counts the lessons returned.",
        tags: ['Catalog'],
        headers: IF_NONE_MATCH,
        querystring: LessonsQuerySchema,
        response: {
          200: jsonResponse('LessonList', 'The lessons.', ETAG_HEADER),
          304: NOT_MODIFIED,
          ...problemResponses(AUTHENTICATED_PROBLEMS),
        },
      },
    },
    (request, reply) => {
      const { tier, standard } = request.query
      const current = catalog.current
      if (standard !== undefined) {
        if (!isStandardReference(standard)) throw badStandard(standard)
        return send(request, reply, lessonsWithStandard(current, standard, tier))
      }
      return send(request, reply, tier === undefined ? current.lessons : current.lessonsByTier.get(tier)!)
    },
  )

  app.get(
    '/lessons/*',
    {
      schema: {
        operationId: 'getLesson',
        summary: 'Get lesson metadata',
        description:
          'The slug has the form `<tier>/<lessonId>-<title-words>` and is placed in the path as is, slash included ' +
          '(`/api/v1/lessons/explorer/e1-robots-follow-instructions`); an encoded slash (`%2F`) is accepted too.',
        tags: ['Catalog'],
        headers: IF_NONE_MATCH,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: jsonResponse('Lesson', 'The lesson metadata.', ETAG_HEADER),
          304: NOT_MODIFIED,
          ...problemResponses([...AUTHENTICATED_PROBLEMS, 'lesson_not_found', 'route_not_found']),
        },
      },
    },
    (request, reply) => {
      const slug = (request.params as { '*': string })['*']
      // A slug has exactly one slash: more segments name a path under a lesson, and no such
      // endpoint exists.
      if (slug.split('/').length > 2) throw new ProblemError('route_not_found', notFoundProblem(request).detail)
      if (!SLUG.test(slug)) {
        throw new ProblemError(
          'invalid_request',
          `The lesson slug "${slug.slice(0, 100)}" does not have the form <tier>/<lessonId>-<title-words>.`,
          {
            errors: [
              {
                in: 'path',
                field: 'slug',
                detail:
                  'must have the form <tier>/<lessonId>-<title-words>, e.g. explorer/e1-robots-follow-instructions',
              },
            ],
          },
        )
      }
      const representation = catalog.current.lessonBySlug.get(slug)
      if (representation === undefined) throw new ProblemError('lesson_not_found', `No lesson has the slug "${slug}".`)
      return send(request, reply, representation)
    },
  )
}
