/**
 * Locks that keep shares and links in step when writers race on PostgreSQL, where each statement
 * reads only what was committed when it began: every writer of an organisation's shares or links
 * first locks the rows of the schools concerned, then those of the organisations, each in id
 * order. A school being shared and a student joining it, two shares of one school, or a share
 * ending while another adds the same student then follow one another, instead of each missing
 * the other's rows (a link would outlive its last share, or a student miss their school's share).
 *
 * The lock is the row updated to itself: portable, and on PostgreSQL a `FOR NO KEY UPDATE` lock,
 * which the foreign-key checks of other writers do not wait for. On SQLite a writing transaction
 * runs alone already, and the update costs one page write.
 */
import { type Kysely, sql } from 'kysely'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** Locks the rows of `schoolIds` until the transaction `trx` ends. */
export function lockSchools(trx: Db, schoolIds: readonly string[]): Promise<void> {
  return lockInIdOrder(trx, 'schools', 'name', schoolIds)
}

/** Locks the rows of `organisationIds` until the transaction `trx` ends; after any school's. */
export function lockOrganisations(trx: Db, organisationIds: readonly string[]): Promise<void> {
  return lockInIdOrder(trx, 'organisations', 'kind', organisationIds)
}

/**
 * Sets `column` of each row to itself: one row a statement, in id order, as a multi-row UPDATE
 * locks in whatever order it scans.
 */
async function lockInIdOrder(
  trx: Db,
  table: 'schools' | 'organisations',
  column: 'name' | 'kind',
  ids: readonly string[],
): Promise<void> {
  for (const id of [...new Set(ids)].sort())
    await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${sql.ref(column)} where id = ${id}`.execute(trx)
}
