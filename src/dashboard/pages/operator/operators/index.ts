/**
 * The Operators page (admins only): the operators with their role, second factor and last
 * activity, the pending invitations, and the forms that invite, change roles, remove and revoke,
 * each through cases/operators.ts, which keeps an admin under any race.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  changeOperatorRole,
  inviteOperator,
  OperatorRefused,
  removeOperator,
  revokeOperatorInvitation,
} from '../../../../cases/operators.js'
import { listOperators, pendingOperatorInvitations } from '../../../../storage/operator-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { type FormBody, text } from '../../../forms.js'
import { operatorAdmin } from '../../../page-roles.js'
import { sendPage } from '../../../send-page.js'
import { OPERATORS_PATH, type OperatorsView, operatorsBody } from './views.js'

export const operatorPagesOfAdmins: PagePlugin = async (app, { context }) => {
  const { storage, clock, mail } = context
  const db = storage.db
  const by = (request: FastifyRequest) => ({ id: request.account!.id, email: request.account!.email })

  async function show(request: FastifyRequest, reply: FastifyReply, form?: OperatorsView['form']) {
    const view: OperatorsView = {
      accountId: request.account!.id,
      operators: await listOperators(db),
      invitations: await pendingOperatorInvitations(db, clock.now()),
      ...(form === undefined ? {} : { form }),
    }
    return sendPage(request, reply, 'Operators', operatorsBody(request, view), form ? 400 : 200, OPERATORS_PATH)
  }

  app.get('/operators', operatorAdmin, (request, reply) => show(request, reply))

  app.post('/operators/invite', operatorAdmin, async (request, reply) => {
    const body = request.body as FormBody
    const email = text(body, 'email')
    const role = text(body, 'role')
    try {
      await inviteOperator(db, { email, role }, by(request), clock.now(), {
        publicUrl: mail.publicUrl,
        ...(mail.held ? { held: mail.held } : {}),
      })
    } catch (error) {
      if (error instanceof OperatorRefused && (error.reason === 'bad-input' || error.reason === 'already-account'))
        return show(request, reply, { email, role, errors: { email: error.message } })
      throw error
    }
    return reply.redirect(`${OPERATORS_PATH}?notice=operator-invited`, 303)
  })

  app.post('/operators/:accountId/role', operatorAdmin, async (request, reply) => {
    const { accountId } = request.params as { accountId: string }
    await changeOperatorRole(db, accountId, text(request.body as FormBody, 'role'), by(request), clock.now())
    // An admin who made itself an operator no longer reaches this page.
    const home = '/dashboard/operator/applications?notice=role-changed'
    if (accountId === request.account!.id) return reply.redirect(home, 303)
    return reply.redirect(`${OPERATORS_PATH}?notice=role-changed`, 303)
  })

  app.post('/operators/:accountId/remove', operatorAdmin, async (request, reply) => {
    const { accountId } = request.params as { accountId: string }
    await removeOperator(db, accountId, by(request), clock.now())
    // Removing oneself ends one's own sessions too: the sign-in page says so.
    if (accountId === request.account!.id) return reply.redirect('/dashboard/login?notice=signed-out', 303)
    return reply.redirect(`${OPERATORS_PATH}?notice=operator-removed`, 303)
  })

  app.post('/operators/invitations/:id/revoke', operatorAdmin, async (request, reply) => {
    const { id } = request.params as { id: string }
    await revokeOperatorInvitation(db, id, by(request), clock.now())
    return reply.redirect(`${OPERATORS_PATH}?notice=invitation-revoked`, 303)
  })
}
