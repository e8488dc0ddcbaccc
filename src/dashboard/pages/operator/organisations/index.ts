/**
 * The partner organisations: the list with each one's status, scopes and agreement, one
 * organisation's page, and suspending (after a confirmation page) or reinstating it, audited.
 */
import { suspendOrReinstate } from '../../../../cases/organisations.js'
import { listAgreements, listApiKeys, listOrganisationsByName } from '../../../../storage/access-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { sendOrganisationPage } from './organisation-page.js'
import { suspendConfirmPage } from './suspend-confirm.js'
import { organisationsBody } from './views.js'
import { operator } from '../../../page-roles.js'

export const organisationPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/organisations', operator, async (request, reply) => {
    const organisations = await listOrganisationsByName(db, 'partner')
    const agreements = await listAgreements(db)
    const body = organisationsBody(organisations, agreements, clock.now())
    return sendPage(request, reply, 'Organisations', body, 200, '/dashboard/operator/organisations')
  })

  app.get('/organisations/:id', operator, async (request, reply) =>
    sendOrganisationPage(request, reply, context, await organisationParam(context, request)),
  )

  app.get('/organisations/:id/suspend', operator, async (request, reply) => {
    const o = await organisationParam(context, request)
    return suspendConfirmPage(request, reply, o, await listApiKeys(db, o.id), clock.now())
  })

  for (const event of ['suspend', 'reinstate'] as const) {
    app.post(`/organisations/:id/${event}`, operator, async (request, reply) => {
      const o = await organisationParam(context, request)
      await suspendOrReinstate(db, { organisation: o, event }, { actor: auditActor(request) }, clock)
      return reply.redirect(
        `/dashboard/operator/organisations/${o.id}?notice=${event === 'suspend' ? 'suspended' : 'reinstated'}`,
        303,
      )
    })
  }
}
