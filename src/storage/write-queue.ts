/**
 * How request-time writes (disclosure records, enrolls) reach storage: each engine has its own
 * queue (sqlite/group-commit.ts shares one commit among the writes of a turn of the event loop;
 * postgres/direct-writes.ts runs each on its own), and repositories see only this.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

export interface WriteQueue {
  /** Runs `work` all-or-nothing; resolves once it is committed. */
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>
  /**
   * Runs one statement (atomic by itself); resolves once it is committed. On PostgreSQL this
   * saves the BEGIN and COMMIT round trips of `transaction`.
   */
  statement<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T>
}
