import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/**
 * Runs `work` in a transaction, or inside the caller's when `db` already is one, so that
 * repository functions compose into larger all-or-nothing operations (an import, the demo seed).
 */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}
