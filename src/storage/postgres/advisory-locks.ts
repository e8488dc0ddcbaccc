/**
 * `TransactionLocks` (transaction.ts) on PostgreSQL: transaction-level advisory locks, which
 * only the code that asks for them takes (a row lock would also be met by every foreign-key
 * check on the row), released at commit or rollback.
 */
import { sql } from 'kysely'
import type { TransactionLocks } from '../transaction.js'

export const advisoryLocks: TransactionLocks = {
  async tryLock(trx, scope, keys) {
    if (keys.length === 0) return []
    const { rows } = await sql<{ id: string }>`select id from unnest(${keys}::text[]) as id
      where pg_try_advisory_xact_lock(hashtextextended(${scope} || id, 0))`.execute(trx)
    return rows.map((row) => row.id)
  },
}
