/**
 * The operator's view of ended agreements across partners (which have attested the deletion), and
 * the certificate of deletion of one, downloaded as signed JSON (cases/deletion-certificate.ts).
 * Each download is audited before it is sent, and opens only from this dashboard (it lists
 * students' ids).
 */
import { NotFoundError } from '../../../../domain/errors.js'
import { UUID } from '../../../../domain/uuid.js'
import { disposedEnd, issueAuditedCertificate } from '../../../../cases/deletion-certificate.js'
import { listOrganisations } from '../../../../storage/access-repository.js'
import { agreementEnds } from '../../../../storage/agreement-end-repository.js'
import type { PagePlugin } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { auditActor } from '../audit-actor.js'
import { organisationParam } from '../organisation-param.js'
import { endedAgreementsBody } from './views.js'
import { operator } from '../../../page-roles.js'

const download = { config: { dashboard: 'operator' as const, studentData: true as const } }

export const endedAgreementPages: PagePlugin = async (app, { context }) => {
  const { storage, clock } = context
  const db = storage.db

  app.get('/ended-agreements', operator, async (request, reply) => {
    const [ends, organisations] = await Promise.all([agreementEnds(db, clock.now()), listOrganisations(db)])
    const names = new Map(organisations.map((o) => [o.id, o.name]))
    const body = endedAgreementsBody(ends, names)
    return sendPage(request, reply, 'Ended agreements', body, 200, '/dashboard/operator/ended-agreements')
  })

  app.get('/organisations/:id/agreements/:agreementId/certificate.json', download, async (request, reply) => {
    const o = await organisationParam(context, request)
    const { agreementId } = request.params as { agreementId: string }
    if (!UUID.test(agreementId)) throw new NotFoundError(agreementId)
    const now = clock.now()
    const end = await disposedEnd(db, o.id, now, agreementId.toLowerCase())
    // A HEAD request (Fastify answers it with this handler) is given nothing, so nothing is signed or audited.
    if (request.method === 'HEAD') return reply.type('application/json; charset=utf-8').send()
    const key = await context.signingKey()
    const certificate = await issueAuditedCertificate(
      db,
      { organisationName: o.name, end, key },
      { actor: auditActor(request) },
      now,
    )
    return reply
      .type('application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="${certificate.filename}"`)
      .send(certificate.file)
  })
}
