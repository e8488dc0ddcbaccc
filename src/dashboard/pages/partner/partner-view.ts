/**
 * What a partner's pages know about the signed-in partner: their account, their organisation once
 * approved (and whether an agreement is in force), their sandbox, and the keys they may see and
 * revoke. A partner only ever sees their own organisation and their own sandbox.
 */
import type { FastifyRequest } from 'fastify'
import { agreementWindow, isAgreementActive } from '../../../domain/agreements.js'
import type { MemberRole } from '../../../domain/member-roles.js'
import { listAgreements, listApiKeys, organisationById } from '../../../storage/access-repository.js'
import { roleIn } from '../../../storage/membership-repository.js'
import type { AccountRow, AgreementRow, ApiKeyRow, OrganisationRow } from '../../../storage/tables.js'
import type { DashboardContext } from '../../dashboard-context.js'

export interface PartnerView {
  account: AccountRow
  /** The organisation the account works in now: one it is a member of (it may switch on its Account page). */
  organisation: OrganisationRow | undefined
  /** The account's role in it. */
  role: MemberRole | undefined
  /** The organisation's data-sharing agreements, oldest first. */
  agreements: AgreementRow[]
  agreementActive: boolean
  sandboxId: string
}

export async function partnerView(context: DashboardContext, request: FastifyRequest): Promise<PartnerView> {
  const db = context.storage.db
  const account = request.account!
  const role = account.organisation_id === null ? undefined : await roleIn(db, account.organisation_id, account.id)
  const organisation = role === undefined ? undefined : await organisationById(db, account.organisation_id!)
  const agreements = organisation === undefined ? [] : await listAgreements(db, organisation.id)
  const agreementActive = isAgreementActive(
    agreements.map((a) => agreementWindow(a.signed_at, a.expires_at, a.ended_at)),
    context.clock.now(),
  )
  return { account, organisation, role, agreements, agreementActive, sandboxId: account.sandbox_organisation_id! }
}

/** Keys the partner may see and revoke: those of their sandbox and of their organisation. */
export async function ownKeys(
  context: DashboardContext,
  v: PartnerView,
): Promise<{ test: ApiKeyRow[]; live: ApiKeyRow[] }> {
  const db = context.storage.db
  const test = (await listApiKeys(db, v.sandboxId)).filter((key) => key.mode === 'test')
  const live =
    v.organisation === undefined ? [] : (await listApiKeys(db, v.organisation.id)).filter((key) => key.mode === 'live')
  return { test, live }
}
