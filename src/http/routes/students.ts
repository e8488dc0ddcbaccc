/**
 * GET /api/v1/students/:id/progress and POST /api/v1/students/:id/enroll. Access control
 * (scope, agreement) has run before these handlers; what remains is the organisation boundary:
 * a student not linked to the key's organisation is "not found", exactly like an unknown id.
 */
import type { FastifyRequest } from 'fastify'
import { enrollStudent } from '../../cases/enroll.js'
import { readStudentProgress } from '../../cases/progress-read.js'
import type { Clock } from '../../clock.js'
import { progressView } from '../../domain/progress.js'
import type { Scope } from '../../domain/scopes.js'
import { ProblemError } from '../../errors.js'
import type { CatalogState } from '../../services/catalog-state.js'
import type { Storage } from '../../storage/connection.js'
import type { DisclosureAction } from '../../storage/disclosure-log.js'
import { requireScope } from '../access-control.js'
import { studentAccess } from '../student-access.js'
import { studentNotFound } from '../student-not-found.js'
import type { CatalogRepresentations } from '../catalog-representations.js'
import type { TypedApp } from '../app-types.js'
import { EnrollBodySchema, StudentParamsSchema } from '../schemas/students.js'
import { AUTHENTICATED_PROBLEMS, jsonResponse, problemResponses } from '../schemas/responses.js'

const STUDENT_PROBLEMS = [
  ...AUTHENTICATED_PROBLEMS,
  'insufficient_scope',
  'agreement_required',
  'student_not_found',
  'storage_unavailable',
] as const

function notFound(id: string): ProblemError {
  const { code, detail } = studentNotFound(id)
  return new ProblemError(code, detail)
}

export function studentRoutes(
  app: TypedApp,
  deps: { storage: Storage; catalog: CatalogState<CatalogRepresentations>; clock: Clock },
): void {
  const { storage, catalog, clock } = deps

  const context = (request: FastifyRequest) => studentAccess(request, clock)
  /** A student route's key check, and what a call does to the student's data (its disclosure rows). */
  const guarded = (scope: Scope, disclosure: DisclosureAction) => ({
    onRequest: requireScope(scope, { writes: storage.writes, clock }),
    config: { disclosure },
  })

  app.get(
    '/students/:id/progress',
    {
      ...guarded('students:read', 'progress.read'),
      schema: {
        operationId: 'getStudentProgress',
        summary: 'Get student progress',
        description:
          'Needs the `students:read` scope and an active data-sharing agreement. Returns the first name only. ' +
          'Students not linked to your organisation answer 404, like unknown ids. ' +
          'Every call is recorded in the disclosure log.',
        tags: ['Students'],
        security: [{ bearerAuth: ['students:read'] }],
        params: StudentParamsSchema,
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: jsonResponse('StudentProgress', "The student's progress."),
          ...problemResponses(STUDENT_PROBLEMS),
        },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase()
      const student = await readStudentProgress(storage.db, storage.writes, id, context(request), storage.reader)
      if (student === undefined) throw notFound(id)
      return progressView(student, catalog.current)
    },
  )

  app.post(
    '/students/:id/enroll',
    {
      ...guarded('students:write', 'enroll'),
      schema: {
        operationId: 'enrollStudent',
        summary: 'Set student tier',
        description:
          'Needs the `students:write` scope and an active data-sharing agreement. ' +
          'Setting the tier the student already has changes nothing and returns the stored `updatedAt`, ' +
          'so retrying is safe. Concurrent enrolls of one student take effect one after another: the last one ' +
          'wins, and a 200 always names the tier asked for. Every call is recorded in the disclosure log.',
        tags: ['Students'],
        security: [{ bearerAuth: ['students:write'] }],
        params: StudentParamsSchema,
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        body: EnrollBodySchema,
        response: {
          200: jsonResponse('Enrollment', 'The tier now set and when it last changed.'),
          ...problemResponses([...STUDENT_PROBLEMS, 'malformed_json', 'payload_too_large', 'unsupported_media_type']),
        },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase()
      const result = await enrollStudent(storage.writes, id, request.body.tier, context(request), clock.now())
      if (result === undefined) throw notFound(id)
      return { profileId: result.profileId, tier: result.tier, updatedAt: result.updatedAt }
    },
  )
}
