/**
 * Request-time writes on PostgreSQL: each runs on its own. PostgreSQL commits concurrent
 * transactions in parallel and groups their WAL flushes itself, so nothing is gained by sharing
 * a commit (as SQLite's queue does, sqlite/group-commit.ts).
 */
import type { Kysely } from 'kysely'
import type { Database } from '../tables.js'
import { inTransaction } from '../transaction.js'
import type { WriteQueue } from '../write-queue.js'

export function directWriteQueue(db: Kysely<Database>): WriteQueue {
  return {
    transaction: (work) => inTransaction(db, work),
    statement: (work) => work(db),
  }
}
