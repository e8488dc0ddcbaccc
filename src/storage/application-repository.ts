/**
 * Access applications. A partner submits one; the operator approves it (which creates the
 * organisation, grants its scopes and links the partner's account) or rejects it with a reason.
 * Decisions follow the state machine in domain/application-state.ts and are audited.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { type ApplicationState, IllegalTransition, nextApplicationState } from '../domain/application-state.js'
import { formatScopes, type Scope } from '../domain/scopes.js'
import { NotFoundError } from '../domain/errors.js'
import { createOrganisation } from './access-repository.js'
import { recordAudit } from './audit-repository.js'
import type { ApplicationRow, Database } from './tables.js'
import { inTransaction } from './transaction.js'

export interface NewApplication {
  accountId: string
  organisationName: string
  website: string
  contactName: string
  contactEmail: string
  intendedUse: string
  requestedScopes: readonly Scope[]
}

export async function submitApplication(
  db: Kysely<Database>,
  application: NewApplication,
  now: number,
): Promise<ApplicationRow> {
  return inTransaction(db, async (trx) => {
    const open = await trx
      .selectFrom('applications')
      .select('state')
      .where('account_id', '=', application.accountId)
      .where('state', 'in', ['submitted', 'approved'])
      .executeTakeFirst()
    if (open !== undefined) throw new IllegalTransition(`You already have an application that is ${open.state}.`)
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
    await trx.insertInto('applications').values(row).execute()
    return row
  })
}

/** The account's applications, newest first. */
export async function applicationsOf(db: Kysely<Database>, accountId: string): Promise<ApplicationRow[]> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .execute()
}

export async function listApplications(db: Kysely<Database>, state?: ApplicationState): Promise<ApplicationRow[]> {
  let query = db.selectFrom('applications').selectAll()
  if (state !== undefined) query = query.where('state', '=', state)
  return query.orderBy('created_at').execute()
}

export async function findApplication(db: Kysely<Database>, id: string): Promise<ApplicationRow> {
  const row = await db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst()
  if (row === undefined) throw new NotFoundError(`no application ${id}`)
  return row
}

export type Decision = { event: 'approve'; grantedScopes: readonly Scope[] } | { event: 'reject'; reason: string }

export async function decideApplication(
  db: Kysely<Database>,
  id: string,
  decision: Decision,
  actor: string,
  now: number,
): Promise<ApplicationRow> {
  return inTransaction(db, async (trx) => {
    const application = await findApplication(trx, id)
    const state = nextApplicationState(application.state, decision.event)
    let organisationId: string | null = null
    if (decision.event === 'approve') {
      const organisation = await createOrganisation(trx, application.organisation_name, now, {
        allowedScopes: decision.grantedScopes,
      })
      organisationId = organisation.id
      await trx
        .updateTable('accounts')
        .set({ organisation_id: organisation.id })
        .where('id', '=', application.account_id)
        .execute()
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
    // The state condition makes two operators deciding at once safe: only one update lands.
    const result = await trx
      .updateTable('applications')
      .set(decided)
      .where('id', '=', id)
      .where('state', '=', 'submitted')
      .executeTakeFirst()
    if (Number(result.numUpdatedRows) !== 1) throw new IllegalTransition('This application was decided meanwhile.')
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
    return { ...application, ...decided }
  })
}
