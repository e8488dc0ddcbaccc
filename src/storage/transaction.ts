import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/**
 * Runs `work` in a transaction, or inside the caller's when `db` already is one, so that
 * repository functions compose into larger all-or-nothing operations (an import, the demo seed).
 */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}

/**
 * Locks on names rather than rows, held by a transaction until it ends: PostgreSQL's advisory
 * locks (postgres/advisory-locks.ts). On SQLite a writing transaction runs alone, so it holds
 * every such lock already.
 */
export interface TransactionLocks {
  /**
   * Of `keys`, those whose lock (named `scope` followed by the key) `trx` now holds; a key whose
   * lock another transaction holds is left out rather than waited for.
   */
  tryLock(trx: Kysely<Database>, scope: string, keys: readonly string[]): Promise<string[]>
}
