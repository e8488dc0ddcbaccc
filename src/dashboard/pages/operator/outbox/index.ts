/**
 * The Outbox: every message the service queued, newest first and paged, each readable here (when
 * SMTP_URL is unset, this is where mail is read); a test message to an address the operator types,
 * and "Send again" for a message interrupted or failed, both audited (cases/mail.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { queueTestMail, recipientProblem, sendMailAgain } from '../../../../cases/mail.js'
import { countMailByState, pageOutbox } from '../../../../storage/mail-outbox-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { DashboardError } from '../../../dashboard-error.js'
import { type FormBody, text } from '../../../forms.js'
import { operator } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { OUTBOX_PATH, type OutboxView, outboxBody } from './views.js'

/** Messages per page. */
const OUTBOX_PAGE = 50

/** A message id as the page writes it in its addresses, or undefined. */
function messageId(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value) ? Number(value) : undefined
}

export const outboxPages: PagePlugin = async (app, { context }) => {
  const { storage, clock, mail } = context
  const db = storage.db

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: Pick<OutboxView, 'form' | 'done'>,
    status = 200,
  ) => {
    const query = request.query as Record<string, unknown>
    const before = query.before === undefined ? undefined : messageId(query.before)
    if (query.before !== undefined && before === undefined)
      throw new DashboardError(400, 'Bad request', 'That page of the outbox does not exist: start from its first page.')
    const [page, counts] = await Promise.all([pageOutbox(db, { before, limit: OUTBOX_PAGE }), countMailByState(db)])
    const body = outboxBody(request, { page, before, counts, sending: mail.sending, ...extra })
    return sendPage(request, reply, 'Outbox', body, status, OUTBOX_PATH)
  }

  app.get('/outbox', operator, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const queued = messageId(query.queued)
    const again = messageId(query.again)
    const done =
      queued !== undefined ? { id: queued, again: false } : again === undefined ? undefined : { id: again, again: true }
    return show(request, reply, done === undefined ? {} : { done })
  })

  app.post('/outbox/test', operator, async (request, reply) => {
    const to = text(request.body as FormBody, 'to')
    const problem = recipientProblem(to)
    if (problem !== null) return show(request, reply, { form: { to, errors: { to: problem } } }, 400)
    const id = await queueTestMail(db, to, mail.publicUrl, clock.now(), {
      audit: { actor: auditActor(request) },
      held: mail.held,
    })
    return reply.redirect(`${OUTBOX_PATH}?queued=${id}`, 303)
  })

  app.post('/outbox/:id/send-again', operator, async (request, reply) => {
    const id = messageId((request.params as { id: string }).id)
    if (id === undefined) throw new DashboardError(404, 'Not found', 'There is no such message.')
    // No such message is a 404 page, one in another state a 409 page (the dashboard's error handler).
    await sendMailAgain(db, id, clock.now(), { actor: auditActor(request) })
    return reply.redirect(`${OUTBOX_PATH}?again=${id}`, 303)
  })
}
