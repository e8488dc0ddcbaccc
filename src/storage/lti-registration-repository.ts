/**
 * The rows of LTI registrations (migration 0028): the platforms registered, their deployments,
 * and the dynamic registration URLs an operator made. What a registration may do is
 * cases/lti-registrations.ts's; these are its queries.
 */
import type { Kysely } from 'kysely'
import type {
  Database,
  LtiRegistrationLinkRow,
  LtiRegistrationRow,
  LtiRegistrationStatus,
  LtiRegistrationsTable,
} from './tables.js'
import type { Insertable } from 'kysely'

type Db = Kysely<Database>

export function registrationById(db: Db, id: string): Promise<LtiRegistrationRow | undefined> {
  return db.selectFrom('lti_registrations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The registration a platform names in a login or a launch: its issuer and our client id there. */
export function registrationByClient(
  db: Db,
  issuer: string,
  clientId: string,
): Promise<LtiRegistrationRow | undefined> {
  return db
    .selectFrom('lti_registrations')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
}

/** A login names the issuer alone when the platform has one registration of ours (LTI 1.3 5.1.1.1). */
export function registrationsOfIssuer(db: Db, issuer: string): Promise<LtiRegistrationRow[]> {
  return db.selectFrom('lti_registrations').selectAll().where('issuer', '=', issuer).limit(2).execute()
}

export function listRegistrations(db: Db, status?: LtiRegistrationStatus): Promise<LtiRegistrationRow[]> {
  let query = db.selectFrom('lti_registrations').selectAll()
  if (status !== undefined) query = query.where('status', '=', status)
  return query.orderBy('created_at', 'desc').orderBy('id').execute()
}

export async function deploymentsOf(db: Db, registrationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('lti_deployments')
    .select('deployment_id')
    .where('registration_id', '=', registrationId)
    .orderBy('created_at')
    .orderBy('deployment_id')
    .execute()
  return rows.map((row) => row.deployment_id)
}

export async function hasDeployment(db: Db, registrationId: string, deploymentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('lti_deployments')
    .select('deployment_id')
    .where('registration_id', '=', registrationId)
    .where('deployment_id', '=', deploymentId)
    .executeTakeFirst()
  return row !== undefined
}

export function registrationLinkByTokenHash(db: Db, tokenHash: string): Promise<LtiRegistrationLinkRow | undefined> {
  return db.selectFrom('lti_registration_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}

export function registrationLinksOf(db: Db, organisationId: string): Promise<LtiRegistrationLinkRow[]> {
  return db
    .selectFrom('lti_registration_links')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at', 'desc')
    .execute()
}

/** False when (issuer, client id) is registered already. */
export async function insertRegistration(trx: Db, row: Insertable<LtiRegistrationsTable>): Promise<boolean> {
  const inserted = await trx
    .insertInto('lti_registrations')
    .values(row)
    .onConflict((oc) => oc.columns(['issuer', 'client_id']).doNothing())
    .returning('id')
    .executeTakeFirst()
  return inserted !== undefined
}

export async function insertDeployments(trx: Db, registrationId: string, deploymentIds: readonly string[], at: string) {
  if (deploymentIds.length === 0) return
  await trx
    .insertInto('lti_deployments')
    .values(deploymentIds.map((deployment_id) => ({ registration_id: registrationId, deployment_id, created_at: at })))
    .onConflict((oc) => oc.columns(['registration_id', 'deployment_id']).doNothing())
    .execute()
}

export async function removeDeployment(trx: Db, registrationId: string, deploymentId: string): Promise<boolean> {
  const result = await trx
    .deleteFrom('lti_deployments')
    .where('registration_id', '=', registrationId)
    .where('deployment_id', '=', deploymentId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) === 1
}

/** Moves the registration from `from` to a new status; false when it was not in `from` (a race lost). */
export async function setRegistrationStatus(
  trx: Db,
  id: string,
  from: LtiRegistrationStatus,
  set: Partial<Pick<LtiRegistrationRow, 'status' | 'activated_at' | 'activated_by' | 'deactivated_at' | 'share_id'>>,
): Promise<boolean> {
  const result = await trx
    .updateTable('lti_registrations')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function insertRegistrationLink(trx: Db, row: LtiRegistrationLinkRow): Promise<void> {
  await trx.insertInto('lti_registration_links').values(row).execute()
}

export async function revokeRegistrationLink(trx: Db, id: string, at: string): Promise<boolean> {
  const result = await trx
    .updateTable('lti_registration_links')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}
