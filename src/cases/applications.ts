/**
 * Access applications. A partner submits one (at most one open at a time); the operator approves
 * it (which creates the organisation, grants its scopes, links the partner's account and makes it
 * the organisation's owner) or rejects it with a reason. Decisions follow the state machine in
 * domain/application-state.ts and are audited in their transaction.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { IllegalTransition, nextApplicationState } from '../domain/application-state.js'
import { ConflictError } from '../domain/errors.js'
import { formatScopes, type Scope } from '../domain/scopes.js'
import { createOrganisation } from '../storage/access-repository.js'
import { findAccount, setAccountOrganisation } from '../storage/account-repository.js'
import {
  findApplication,
  insertApplication,
  markApplicationDecided,
  openApplicationState,
} from '../storage/application-repository.js'
import { recordAudit } from '../storage/audit-repository.js'
import { insertMembership } from '../storage/membership-repository.js'
import type { ApplicationRow, Database } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { announceNotices, type NoticeContext, queueDecisionNotice } from './notices.js'

export interface NewApplication {
  accountId: string
  organisationName: string
  website: string
  contactName: string
  contactEmail: string
  intendedUse: string
  requestedScopes: readonly Scope[]
}

/** Live access is for accounts whose address is proven (cases/email-verification.ts); the sandbox needs no proof. */
export class UnverifiedEmail extends ConflictError {
  constructor() {
    super('Verify your e-mail address before applying: use the link we sent you, or send a new one.')
  }
}

export async function submitApplication(
  db: Kysely<Database>,
  application: NewApplication,
  now: number,
): Promise<ApplicationRow> {
  return inTransaction(db, async (trx) => {
    const account = await findAccount(trx, application.accountId)
    if (account?.email_verified_at == null) throw new UnverifiedEmail()
    const open = await openApplicationState(trx, application.accountId)
    if (open !== undefined) throw new IllegalTransition(`You already have an application that is ${open}.`)
    const row: ApplicationRow = {
      id: randomUUID(),
      account_id: application.accountId,
      organisation_name: application.organisationName.trim(),
      website: application.website.trim(),
      contact_name: application.contactName.trim(),
      contact_email: application.contactEmail.trim(),
      intended_use: application.intendedUse.trim(),
      requested_scopes: formatScopes(application.requestedScopes),
      state: 'submitted',
      decision_reason: null,
      decided_by: null,
      decided_at: null,
      organisation_id: null,
      created_at: isoAt(now),
    }
    await insertApplication(trx, row)
    return row
  })
}

export type Decision = { event: 'approve'; grantedScopes: readonly Scope[] } | { event: 'reject'; reason: string }

export async function decideApplication(
  db: Kysely<Database>,
  id: string,
  decision: Decision,
  actor: string,
  now: number,
  notices?: NoticeContext,
): Promise<ApplicationRow> {
  const { decided, queued } = await inTransaction(db, async (trx) => {
    const application = await findApplication(trx, id)
    const state = nextApplicationState(application.state, decision.event)
    let organisationId: string | null = null
    if (decision.event === 'approve') {
      const organisation = await createOrganisation(trx, application.organisation_name, now, {
        allowedScopes: decision.grantedScopes,
      })
      organisationId = organisation.id
      await setAccountOrganisation(trx, application.account_id, organisation.id)
      await insertMembership(trx, { organisationId, accountId: application.account_id, role: 'owner' }, now)
    } else if (decision.reason.trim() === '') {
      throw new IllegalTransition('Give the partner a reason for the rejection.')
    }
    const decided = {
      state,
      decision_reason: decision.event === 'reject' ? decision.reason.trim() : null,
      decided_by: actor,
      decided_at: isoAt(now),
      organisation_id: organisationId,
    }
    if (!(await markApplicationDecided(trx, id, decided)))
      throw new IllegalTransition('This application was decided meanwhile.')
    await recordAudit(
      trx,
      {
        actor,
        action: `application.${decision.event}`,
        target: `application:${id}`,
        detail:
          decision.event === 'approve'
            ? { organisation: application.organisation_name, organisationId, grantedScopes: decision.grantedScopes }
            : { organisation: application.organisation_name, reason: decision.reason.trim() },
      },
      now,
    )
    const row = { ...application, ...decided }
    // The applicant is told in the decision's transaction (cases/notices.ts).
    const granted = decision.event === 'approve' ? decision.grantedScopes : []
    const queued = notices ? await queueDecisionNotice(trx, row, granted, notices, now) : []
    return { decided: row, queued }
  })
  announceNotices(notices?.held, queued)
  return decided
}
