/**
 * Access applications: their rows (cases/applications.ts submits and decides them).
 */
import type { Kysely } from 'kysely'
import type { ApplicationState } from '../domain/application-state.js'
import { NotFoundError } from '../domain/errors.js'
import type { ApplicationRow, Database } from './tables.js'

/** The state of the account's application that is submitted or approved, if it has one. */
export async function openApplicationState(
  db: Kysely<Database>,
  accountId: string,
): Promise<ApplicationState | undefined> {
  const open = await db
    .selectFrom('applications')
    .select('state')
    .where('account_id', '=', accountId)
    .where('state', 'in', ['submitted', 'approved'])
    .executeTakeFirst()
  return open?.state
}

export async function insertApplication(db: Kysely<Database>, row: ApplicationRow): Promise<void> {
  await db.insertInto('applications').values(row).execute()
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

/** The decision's columns, unless the application was decided meanwhile; true if they were written. */
export async function markApplicationDecided(
  db: Kysely<Database>,
  id: string,
  decided: Pick<ApplicationRow, 'state' | 'decision_reason' | 'decided_by' | 'decided_at' | 'organisation_id'>,
): Promise<boolean> {
  // The state condition makes two operators deciding at once safe: only one update lands.
  const result = await db
    .updateTable('applications')
    .set(decided)
    .where('id', '=', id)
    .where('state', '=', 'submitted')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}
