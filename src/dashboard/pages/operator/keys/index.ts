/** Revoking one of an organisation's keys: a confirmation page naming the key, then the revocation, audited. */
import type { FastifyRequest } from 'fastify'
import { revokeOrganisationKey } from '../../../../cases/api-keys.js'
import { NotFoundError } from '../../../../domain/errors.js'
import { listApiKeys } from '../../../../storage/access-repository.js'
import type { ApiKeyRow, OrganisationRow } from '../../../../storage/tables.js'
import type { DashboardContext, PagePlugin } from '../../../dashboard-context.js'
import { revokeConfirmPage } from '../../../views/revoke-confirm.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { operator } from '../../../page-roles.js'

/** The organisation and its key that `:id` and `:keyId` name, or the dashboard's 404. */
async function organisationKey(
  context: DashboardContext,
  request: FastifyRequest,
): Promise<{ o: OrganisationRow; key: ApiKeyRow }> {
  const o = await organisationParam(context, request)
  const { keyId } = request.params as { keyId: string }
  const key = (await listApiKeys(context.storage.db, o.id)).find((k) => k.id === keyId)
  if (key === undefined) throw new NotFoundError(keyId)
  return { o, key }
}

export const keyPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context

  app.get('/organisations/:id/keys/:keyId/revoke', operator, async (request, reply) => {
    const { o, key } = await organisationKey(context, request)
    const base = `/dashboard/operator/organisations/${o.id}`
    return revokeConfirmPage(request, reply, key, clock.now(), {
      action: `${base}/keys/${key.id}/revoke`,
      back: base,
      organisation: o.name,
    })
  })

  app.post('/organisations/:id/keys/:keyId/revoke', operator, async (request, reply) => {
    const { o, key } = await organisationKey(context, request)
    await revokeOrganisationKey(storage.db, { key, organisation: o.name }, { actor: auditActor(request) }, clock)
    return reply.redirect(`/dashboard/operator/organisations/${o.id}?notice=key-revoked`, 303)
  })
}
