/**
 * Sends one organisation's page; the agreement and share forms' handlers send it too, with the
 * refused form kept (agreements/index.ts, shares/index.ts), so it lives apart from the
 * organisation routes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_DISPOSITION_DAYS } from '../../../../domain/agreement-terms.js'
import { listAgreements, listApiKeys } from '../../../../storage/access-repository.js'
import { accountsOf } from '../../../../storage/account-repository.js'
import { agreementEnds } from '../../../../storage/agreement-end-repository.js'
import type { OrganisationRow } from '../../../../storage/tables.js'
import type { DashboardContext } from '../../../dashboard-context.js'
import { sendPage } from '../../../send-page.js'
import { listSchools } from '../../../../storage/school-repository.js'
import { countLinked, listShares } from '../../../../storage/share-listing-repository.js'
import { type OrganisationForms, organisationBody } from './views.js'

export async function sendOrganisationPage(
  request: FastifyRequest,
  reply: FastifyReply,
  context: DashboardContext,
  o: OrganisationRow,
  forms: OrganisationForms = {},
  status = 200,
): Promise<FastifyReply> {
  const db = context.storage.db
  const now = context.clock.now()
  const [agreements, keys, accounts, ends, shares, schools, linked] = await Promise.all([
    listAgreements(db, o.id),
    listApiKeys(db, o.id),
    accountsOf(db, o.id),
    agreementEnds(db, now, o.id),
    listShares(db, o.id),
    listSchools(db),
    countLinked(db, o.id),
  ])
  const dispositionDays = context.agreementDispositionDays ?? DEFAULT_DISPOSITION_DAYS
  const body = organisationBody(
    request,
    o,
    { agreements, keys, accounts, ends, now, dispositionDays, shares: { shares, schools, linked } },
    forms,
  )
  return sendPage(request, reply, o.name, body, status, '/dashboard/operator/organisations')
}
