/**
 * What the rest of the service sees of storage, whichever engine serves it: connection.ts
 * chooses the engine, sqlite/ and postgres/ each implement this, and nothing else knows which
 * one it has (beyond `engine`, which the service reports).
 */
import type { Kysely } from 'kysely'
import type { SyncReader } from './student-repository.js'
import type { Database } from './tables.js'
import type { TransactionLocks } from './transaction.js'
import type { WriteQueue } from './write-queue.js'

export type Engine = 'sqlite' | 'postgres'

export interface Storage {
  readonly db: Kysely<Database>
  readonly engine: Engine
  /** PostgreSQL schema in use (undefined on SQLite). */
  readonly schema: string | undefined
  /** Request-time writes: grouped into shared commits on SQLite, direct on PostgreSQL. */
  readonly writes: WriteQueue
  /**
   * Reads that answer synchronously, for the hottest one (progress): SQLite on a file
   * (sqlite/sync-reader.ts); undefined on PostgreSQL and in-memory SQLite.
   */
  readonly reader: SyncReader | undefined
  /**
   * Key lookups: on SQLite (on a file) the read-only connection, which maps nothing into memory
   * (see `SqliteOptions.mmapBytes`); `db` elsewhere.
   */
  readonly keyLookups: Kysely<Database>
  /** Locks on names, for one claimer at a time (PostgreSQL's advisory locks). */
  readonly locks: TransactionLocks
  /**
   * `keyIds` in the order in which to update their api_keys rows: on SQLite the order the rows
   * sit in, so that a chunk of updates shares pages (sqlite/row-order.ts); as given elsewhere.
   */
  keysInRowOrder(keyIds: readonly string[]): Promise<string[]>
  /**
   * After an erasure: empties SQLite's write-ahead log file, whose older frames may still hold what
   * was erased (sqlite/wal-truncation.ts); `busy` when other connections kept it from that for a
   * while, `none` where there is no such file of ours (PostgreSQL, memory).
   */
  truncateLog(): Promise<'truncated' | 'busy' | 'none'>
  /** A trivial round trip, for readiness checks. */
  ping(): Promise<void>
  close(): Promise<void>
}
