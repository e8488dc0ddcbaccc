/**
 * SQLite storage: better-sqlite3 in WAL mode on a file (`sqlite:<file>`, `file:<file>`) or in
 * memory (`sqlite::memory:`). On a file there are two connections: the writer, which every
 * transaction and the group commit use, and a read-only one for key lookups and for synchronous
 * reads while the writer has a transaction open.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import type { Storage } from '../storage.js'
import type { Database } from '../tables.js'
import type { TransactionLocks } from '../transaction.js'
import { type Checkpointer, startCheckpointer } from './checkpointer.js'
import { groupCommitWriteQueue } from './group-commit.js'
import { tracedWrites } from '../traced-writes.js'
import { ImmediateSqliteDialect } from './immediate-transactions.js'
import { createDatabaseFile } from './private-files.js'
import { inRowOrder } from './row-order.js'
import { withStatementCache } from './statement-cache.js'
import { truncateWal } from './wal-truncation.js'
import { sqliteSyncReader } from './sync-reader.js'

export interface SqliteOptions {
  /** SQLite: how long a writer waits for another process's write lock before failing (ms). */
  busyTimeoutMs?: number
  /**
   * SQLite: how long a transaction keeps trying for the write lock, serving other work between
   * tries, before it fails (ms); the longer of the busy timeout and 2 s by default.
   */
  beginWaitMs?: number
  synchronous?: 'NORMAL' | 'FULL'
  /**
   * SQLite: checkpoint the WAL on a worker thread instead of inside commits on the event loop
   * (for the server; short-lived CLI commands keep SQLite's default).
   */
  backgroundCheckpoints?: boolean
  /** The WAL size (bytes) that starts the checkpoint thread; 4 MiB by default. */
  checkpointerStartBytes?: number
  /** How often the WAL size is checked until then (ms); 1 s by default. */
  checkpointerWatchMs?: number
  /** SQLite: page cache of the connection in KiB; better-sqlite3's build defaults to 16,000. */
  pageCacheKib?: number
  /** SQLite: page cache of the writing connection's temporary tables (an import's staging) in KiB. */
  tempCacheKib?: number
  /**
   * Bytes of the file the writing connection reads through a memory map (SQLite's mmap_size);
   * none by default. A read then copies nothing and makes no system call for a page the
   * operating system holds, which makes progress reads cheaper. Mapped pages count in the
   * process's resident memory (they are the operating system's shared, reclaimable file cache),
   * so keys are looked up on the read-only connection, which does not map: through the map, the
   * key pages that many keys' first lookups read once would raise the process's peak (figures:
   * docs/performance.md).
   */
  mmapBytes?: number
}

/** The storage with what only SQLite has, for the tests of its machinery. */
export interface SqliteStorage extends Storage {
  readonly engine: 'sqlite'
  /**
   * The connection synchronous reads use at this moment (undefined in memory). It is the writing
   * connection itself while that has no transaction open (nearly always: a group commit runs
   * whole within one turn of the event loop), so it sees only committed data; otherwise the
   * read-only connection. Each commit into the file empties the page cache of every other
   * connection, and the writer commits disclosure records many times a second, so a lookup on
   * the read-only connection would mostly start from an empty cache (figures:
   * docs/performance.md).
   */
  readonly readConnection: SQLite.Database | undefined
}

export function sqliteFile(url: string): string {
  const file = url.replace(/^(sqlite|file):(\/\/)?/, '')
  if (file === '') throw new Error(`DATABASE_URL "${url}" names no SQLite file`)
  return file
}

/** How often the WAL's size is looked at until the checkpoint thread is needed. */
const CHECKPOINTER_WATCH_MS = 1000
/**
 * The WAL size that starts the checkpoint thread: SQLite's own automatic checkpoint comes at
 * 1,000 pages, about this much.
 */
const CHECKPOINTER_START_BYTES = 4 * 1024 * 1024

/**
 * A writing transaction runs alone on SQLite (it takes the write lock when it begins:
 * immediate-transactions.ts), so it holds every named lock already.
 */
const singleWriterLocks: TransactionLocks = {
  tryLock: async (_trx, _scope, keys) => [...keys],
}

export function openSqlite(url: string, options: SqliteOptions): SqliteStorage {
  const file = sqliteFile(url)
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
    createDatabaseFile(file)
  }
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  // NORMAL in WAL mode: a committed transaction survives a crash of this process (the WAL is
  // in the OS); FULL also survives power loss at the cost of an fsync per commit.
  database.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`)
  database.pragma('foreign_keys = ON')
  // Deleted rows' bytes are overwritten with zeros, so an erased child's first name (or one an
  // import replaced) does not live on in the file's free space (storage/student-removal-repository.ts).
  database.pragma('main.secure_delete = ON')
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000
  database.pragma(`busy_timeout = ${busyTimeoutMs}`)
  if (options.pageCacheKib !== undefined) database.pragma(`cache_size = -${options.pageCacheKib}`)
  if (options.tempCacheKib !== undefined) database.pragma(`temp.cache_size = -${options.tempCacheKib}`)
  let checkpointer: Checkpointer | undefined
  let checkpointerTimer: NodeJS.Timeout | undefined
  if (options.backgroundCheckpoints === true && file !== ':memory:') {
    database.pragma('wal_autocheckpoint = 0')
    // The thread starts once the WAL holds about what SQLite would have checkpointed itself:
    // never while the server starts (its own start costs CPU, which on one core would delay the
    // first answer), and not at all while the service only reads (a thread is a V8 instance of
    // its own, with its own memory; figures: docs/performance.md). Until then the WAL grows by a
    // second's writes.
    const startAboveBytes = options.checkpointerStartBytes ?? CHECKPOINTER_START_BYTES
    checkpointerTimer = setInterval(() => {
      let size = 0
      try {
        size = fs.statSync(`${file}-wal`).size
      } catch {
        // No WAL yet: nothing written.
      }
      if (size < startAboveBytes) return
      clearInterval(checkpointerTimer)
      checkpointer = startCheckpointer({ file })
    }, options.checkpointerWatchMs ?? CHECKPOINTER_WATCH_MS)
    checkpointerTimer.unref()
  }
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect(
      { database: withStatementCache(database) },
      database,
      busyTimeoutMs,
      options.beginWaitMs,
    ),
  })
  // In memory there is one connection, and nothing for a second one to read.
  let readConnection: (() => SQLite.Database) | undefined
  let keyLookups = db
  if (file !== ':memory:') {
    if (options.mmapBytes !== undefined) database.pragma(`mmap_size = ${options.mmapBytes}`)
    const readOnly = new SQLite(file, { readonly: true, fileMustExist: true })
    readOnly.pragma(`busy_timeout = ${busyTimeoutMs}`)
    if (options.pageCacheKib !== undefined) readOnly.pragma(`cache_size = -${options.pageCacheKib}`)
    // Destroying it closes the read-only connection.
    keyLookups = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(readOnly) }) })
    readConnection = () => (database.inTransaction ? readOnly : database)
  }
  return {
    db,
    engine: 'sqlite',
    schema: undefined,
    writes: tracedWrites(groupCommitWriteQueue(db, database), 'sqlite'),
    reader: readConnection === undefined ? undefined : sqliteSyncReader(readConnection),
    get readConnection() {
      return readConnection?.()
    },
    keyLookups,
    locks: singleWriterLocks,
    keysInRowOrder: (keyIds) => inRowOrder(db, keyIds),
    async ping() {
      await sql`select 1`.execute(db)
    },
    async truncateLog() {
      return file === ':memory:' ? 'none' : truncateWal(database)
    },
    async close() {
      clearInterval(checkpointerTimer)
      await checkpointer?.stop()
      if (keyLookups !== db) await keyLookups.destroy()
      await db.destroy()
    },
  }
}
