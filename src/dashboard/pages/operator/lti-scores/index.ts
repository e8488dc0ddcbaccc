/**
 * The scores owed to LTI platforms' gradebooks (cases/lti-scores.ts): newest first, paged, by
 * state, each with its registration, lesson, student, attempts and the platform's last answer,
 * and "Send again" for a failed one, audited. It shows student ids and their scores, so it opens
 * only from this dashboard.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sendScoreAgain } from '../../../../cases/lti-scores.js'
import { UUID } from '../../../../domain/uuid.js'
import { countScoresByState, pageScores, type ScoreCursor } from '../../../../storage/lti-score-repository.js'
import type { LtiScoreState } from '../../../../storage/tables.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { operator } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { SCORE_STATES, SCORES_PATH, scoresBody } from './views.js'

const studentPage = { config: { dashboard: 'operator' as const, studentData: true as const } }

/** Scores per page. */
const SCORES_PAGE = 50

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~([0-9a-f-]{36})$/i

function cursorOf(value: unknown): ScoreCursor | undefined {
  const match = typeof value === 'string' ? CURSOR.exec(value) : null
  return match === null || !UUID.test(match[2]!) ? undefined : { createdAt: match[1]!, id: match[2]! }
}

function stateOf(value: unknown): LtiScoreState | undefined {
  return SCORE_STATES.find((state) => state === value)
}

export const ltiScorePages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  const show = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as Record<string, unknown>
    const before = cursorOf(query.before)
    const state = stateOf(query.state)
    if ((query.before !== undefined && before === undefined) || (query.state !== undefined && state === undefined))
      throw new DashboardError(
        400,
        'Bad request',
        'That page of the scores does not exist: start from their first page.',
      )
    const [page, counts] = await Promise.all([
      pageScores(db, { state, before, limit: SCORES_PAGE }),
      countScoresByState(db),
    ])
    const again = typeof query.again === 'string' && UUID.test(query.again) ? query.again : undefined
    const body = scoresBody(request, { page, state, first: before === undefined, counts, again })
    return sendPage(request, reply, 'LTI scores', body, 200, SCORES_PATH)
  }

  app.get('/lti/scores', studentPage, show)

  app.post('/lti/scores/:id/send-again', operator, async (request, reply) => {
    const id = (request.params as { id: string }).id
    if (!UUID.test(id)) throw new DashboardError(404, 'Not found', 'There is no such score.')
    // No such score is a 404 page, one that has not failed a 409 page (the dashboard's error handler).
    await sendScoreAgain(db, id, clock.now(), { actor: auditActor(request) })
    return reply.redirect(`${SCORES_PATH}?again=${id}`, 303)
  })
}
