/**
 * The review queue: an application is approved with the scopes the operator grants (creating the
 * organisation) or rejected with a reason the partner sees; each decision is audited.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { decideApplication } from '../../../../cases/applications.js'
import { NotFoundError } from '../../../../domain/errors.js'
import { isScope } from '../../../../domain/scopes.js'
import { UUID } from '../../../../domain/uuid.js'
import { accountEmails } from '../../../../storage/account-repository.js'
import { listApplications } from '../../../../storage/application-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { noticeContext } from '../../../notice-context.js'
import { type FieldErrors, type FormBody, list, text } from '../../../forms.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { applicationsBody } from './views.js'
import { operator } from '../../../page-roles.js'

export const applicationPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  /** The review queue; `errors` (by field name) come back from a refused decision form. */
  async function applicationsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    errors: FieldErrors = {},
    status = 200,
  ): Promise<FastifyReply> {
    const all = await listApplications(db)
    const body = applicationsBody(request, all, await accountEmails(db), errors)
    return sendPage(request, reply, 'Applications', body, status, '/dashboard/operator/applications')
  }

  app.get('/applications', operator, async (request, reply) => applicationsPage(request, reply))

  app.post('/applications/:id/approve', operator, async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!UUID.test(id)) throw new NotFoundError(id)
    const scopes = list(request.body as FormBody, 'scopes').filter(isScope)
    const approve = { event: 'approve', grantedScopes: scopes } as const
    await decideApplication(db, id, approve, auditActor(request), clock.now(), noticeContext(context))
    return reply.redirect('/dashboard/operator/applications?notice=approved', 303)
  })

  app.post('/applications/:id/reject', operator, async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!UUID.test(id)) throw new NotFoundError(id)
    const reason = text(request.body as FormBody, `reason-${id}`)
    if (reason === '')
      return applicationsPage(
        request,
        reply,
        { [`reason-${id}`]: 'Write the reason for the rejection: the partner sees it.' },
        400,
      )
    const decision = { event: 'reject', reason: reason.slice(0, 2000) } as const
    await decideApplication(db, id, decision, auditActor(request), clock.now(), noticeContext(context))
    return reply.redirect('/dashboard/operator/applications?notice=rejected', 303)
  })
}
