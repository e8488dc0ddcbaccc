/**
 * GET /api/v1/students (the roster) and GET /api/v1/progress/changes (the change feed): how a
 * partner finds its students and keeps a copy of their tiers and progress in sync. Access
 * control (scope, agreement) has run before these handlers; the organisation boundary and the
 * sandbox rule (test keys see sandbox students only, live keys real ones only) are in every
 * query, as for a single student's progress.
 */
import type { FastifyRequest } from 'fastify'
import type { Clock } from '../../clock.js'
import { ProblemError } from '../../errors.js'
import { UUID } from '../../domain/uuid.js'
import type { Storage } from '../../storage/connection.js'
import { sharedSecret, sharedValue } from '../../cases/shared-settings.js'
import { lastChangeSequence } from '../../storage/student-change-log.js'
import { readChangeFeed } from '../../cases/change-feed-read.js'
import { readRoster } from '../../cases/roster-read.js'
import { requireScope } from '../access-control.js'
import { API_PREFIX } from '../api-prefix.js'
import { studentAccess } from '../student-access.js'
import type { TypedApp } from '../app-types.js'
import { Cursors } from '../cursors.js'
import { integerQuery } from '../integer-query.js'
import { AUTHENTICATED_PROBLEMS, jsonResponse, problemResponses } from '../schemas/responses.js'
import { ChangesQuerySchema, PAGE_LIMIT, RosterQuerySchema } from '../schemas/sync.js'

const SYNC_PROBLEMS = [
  ...AUTHENTICATED_PROBLEMS,
  'insufficient_scope',
  'agreement_required',
  'storage_unavailable',
] as const

const FEED_PROBLEMS = [...SYNC_PROBLEMS, 'cursor_expired'] as const

const LINK_HEADER = {
  Link: {
    type: 'string',
    description:
      'RFC 8288 link to the next page, `</api/v1/...?...&cursor=...>; rel="next"`: sent while another page is ' +
      'waiting (`next` not null, `hasMore` true).',
  },
}

const SEQUENCE = /^[0-9]{1,15}$/

/** The request's own path and query with `cursor` replaced: the `Link` of the next page. */
function nextLink(request: FastifyRequest, path: string, cursor: string): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (name !== 'cursor' && name !== 'from' && value !== undefined) query.set(name, String(value))
  }
  query.set('cursor', cursor)
  return `<${API_PREFIX}${path}?${query}>; rel="next"`
}

export async function syncRoutes(app: TypedApp, deps: { storage: Storage; clock: Clock }): Promise<void> {
  const { storage, clock } = deps
  const checkAccess = requireScope('students:read', { writes: storage.writes, clock })
  const cursors = new Cursors(await sharedSecret(storage.db, 'api-cursors'))
  // Every feed cursor in clear was given out at or below the last change when sealed ones began
  // (or, during an upgrade, by an instance still on the earlier version): one beyond it is read as
  // that change, so its reader may get a change twice but misses none, and a forged one cannot
  // probe where the feed is now.
  const legacyFeedCeiling = Number(
    await sharedValue(storage.db, 'legacy-feed-cursor-ceiling', String(await lastChangeSequence(storage.db))),
  )

  const access = (request: FastifyRequest) => studentAccess(request, clock)

  app.get(
    '/students',
    {
      onRequest: checkAccess,
      preValidation: integerQuery('limit'),
      schema: {
        operationId: 'listStudents',
        summary: "List your organisation's students",
        description:
          'The students linked to your organisation (sandbox students with a test key, real ones with a live key), ' +
          `ordered by \`profileId\`, ${PAGE_LIMIT.default} per page unless \`limit\` says otherwise ` +
          `(at most ${PAGE_LIMIT.maximum}). ` +
          'Follow `next` (or the `Link` header) until it is null. Paging holds while students are added: every ' +
          'student ' +
          'linked before the first page is listed exactly once. Needs the `students:read` scope and, with a live ' +
          'key, an ' +
          'active data-sharing agreement. First names only; every student listed is recorded in the disclosure log.',
        tags: ['Sync'],
        security: [{ bearerAuth: ['students:read'] }],
        querystring: RosterQuerySchema,
        response: {
          200: jsonResponse('Roster', 'One page of students.', LINK_HEADER),
          ...problemResponses(SYNC_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT.default, tier } = request.query
      const reader = access(request)
      const after =
        request.query.cursor === undefined
          ? undefined
          : cursors.decode(
              'students',
              reader.organisationId,
              request.query.cursor,
              (id) => UUID.test(id),
              'leave cursor out to start again',
            ).position
      const page = await readRoster(storage.writes, reader, {
        limit,
        ...(after === undefined ? {} : { after }),
        ...(tier === undefined ? {} : { tier }),
      })
      const next = page.next === null ? null : cursors.encode('students', reader.organisationId, page.next)
      if (next !== null) reply.header('link', nextLink(request, '/students', next))
      return {
        students: page.students.map((student) => ({
          profileId: student.id,
          displayName: student.firstName,
          tier: student.tier,
          updatedAt: student.updatedAt,
        })),
        next,
      }
    },
  )

  app.get(
    '/progress/changes',
    {
      onRequest: checkAccess,
      preValidation: integerQuery('limit'),
      schema: {
        operationId: 'listProgressChanges',
        summary: 'Follow changes to your students',
        description:
          "Every change of your students' tiers and progress entries, in the order the changes were committed, after " +
          'the cursor you send. Without a cursor: `from=now` (the default) returns no changes and a cursor to ' +
          'follow from ' +
          'this moment, `from=beginning` starts from the oldest change the feed still keeps. Send `next` back each ' +
          'time and keep it with your copy: you never miss a change and never get one twice, whichever instance ' +
          'answers and across restarts. While `hasMore` is true, ask again at once; then poll at your own pace, ' +
          "within the feed's retention (90 days unless the operator set another): a cursor with changes after it " +
          'already deleted answers 410 `cursor_expired`, and you resync (roster, then the feed from now), never ' +
          'skip changes. ' +
          `At most \`limit\` changes per response (${PAGE_LIMIT.default} unless given, ` +
          `at most ${PAGE_LIMIT.maximum}). ` +
          'Changes of students linked to your organisation now are listed, from their first change. A student ' +
          'unlinked from your organisation or erased appears once more, as a `student_unlinked` or ' +
          '`student_deleted` notice carrying the id only: delete your copy. Needs the ' +
          '`students:read` scope and, with a live key, an active data-sharing agreement. Every student with a change ' +
          'or notice in a response is recorded once in the disclosure log.',
        tags: ['Sync'],
        security: [{ bearerAuth: ['students:read'] }],
        querystring: ChangesQuerySchema,
        response: {
          200: jsonResponse('ProgressChanges', 'Changes after the cursor, and where to continue.', LINK_HEADER),
          ...problemResponses(FEED_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const { cursor, from, limit = PAGE_LIMIT.default } = request.query
      if (cursor !== undefined && from !== undefined) {
        const detail = 'give either cursor (to continue) or from (to start), not both'
        throw new ProblemError('invalid_request', `The request is invalid: query from: ${detail}.`, {
          errors: [{ in: 'query', field: 'from', detail }],
        })
      }
      const restart = 'start again with from=beginning (everything kept) or without a cursor (from now)'
      const reader = access(request)
      let after: number | 'now' | 'beginning' = from ?? 'now'
      if (cursor !== undefined) {
        const decoded = cursors.decode('changes', reader.organisationId, cursor, (text) => SEQUENCE.test(text), restart)
        after = decoded.legacy ? Math.min(Number(decoded.position), legacyFeedCeiling) : Number(decoded.position)
      }
      const page = await readChangeFeed(storage.writes, reader, after, limit)
      if (page === 'expired')
        throw new ProblemError(
          'cursor_expired',
          "Changes after this cursor are past the feed's retention and were deleted: following it would skip " +
            'them. Resync: take a cursor from now (no cursor, no from), list the roster from the start and replace ' +
            'your copy with it, then follow the feed with that cursor.',
        )
      if (page === 'ahead') {
        const cause = 'This cursor is ahead of every change recorded (was the database restored from a backup?)'
        const detail = `${cause}: ${restart}.`
        throw new ProblemError('invalid_request', `The request is invalid: query cursor: ${detail}`, {
          errors: [{ in: 'query', field: 'cursor', detail }],
        })
      }
      const next = cursors.encode('changes', reader.organisationId, String(page.next))
      if (page.hasMore) reply.header('link', nextLink(request, '/progress/changes', next))
      return {
        changes: page.changes.map((change) =>
          !('firstName' in change)
            ? { sequence: change.sequence, type: change.type, profileId: change.studentId, changedAt: change.changedAt }
            : {
                sequence: change.sequence,
                type: change.type,
                profileId: change.studentId,
                displayName: change.firstName,
                changedAt: change.changedAt,
                ...(change.tier === undefined ? {} : { tier: change.tier }),
                ...(change.entry === undefined ? {} : { progress: change.entry }),
              },
        ),
        next,
        hasMore: page.hasMore,
      }
    },
  )
}
