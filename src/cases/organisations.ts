/**
 * Partner organisations: created by the operator (the CLI, or approving an application), and
 * suspended or reinstated (a suspension refuses the organisation's keys without revoking them).
 */
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import { nextOrganisationStatus, type OrganisationStatus } from '../domain/application-state.js'
import { createOrganisation, setOrganisationStatus } from '../storage/access-repository.js'
import type { Database, OrganisationRow } from '../storage/tables.js'
import { inTransaction } from '../storage/transaction.js'
import { auditOperator, type OperatorAudit } from './operator-action.js'

/** A partner organisation named `name` (1 to 120 characters, unique). */
export function addOrganisation(db: Kysely<Database>, name: string, now: number): Promise<OrganisationRow> {
  return createOrganisation(db, name, now)
}

/** Sets the status; setting the one it has changes nothing and records no change. */
export function changeOrganisationStatus(
  db: Kysely<Database>,
  organisationId: string,
  status: OrganisationStatus,
): Promise<{ organisation: OrganisationRow; changed: boolean }> {
  return setOrganisationStatus(db, organisationId, status)
}

/**
 * The operator suspends or reinstates an organisation from its page: IllegalTransition when it is
 * already so; the change and its audit row in one transaction.
 */
export async function suspendOrReinstate(
  db: Kysely<Database>,
  change: { organisation: OrganisationRow; event: 'suspend' | 'reinstate' },
  audit: OperatorAudit,
  clock: Clock,
): Promise<void> {
  const { organisation, event } = change
  const status = nextOrganisationStatus(organisation.status, event)
  await inTransaction(db, async (trx) => {
    await setOrganisationStatus(trx, organisation.id, status)
    const entry = { action: `organisation.${event}`, target: `organisation:${organisation.id}` }
    await auditOperator(trx, audit, { ...entry, detail: { organisation: organisation.name } }, clock.now())
  })
}
