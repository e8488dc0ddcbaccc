/**
 * The only module that knows which engine is in use. Everything else sees `Kysely<Database>`.
 *
 * - `sqlite:<file>` (or `file:<file>`, or `sqlite::memory:`): better-sqlite3 in WAL mode.
 * - `postgres://...`: a pg pool; `?schema=<name>` selects (and migrations create) a schema,
 *   which lets test runs and tenants share one database without colliding.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import {
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely'
import { createRequire } from 'node:module'
import type PG from 'pg'
import type { Database } from './tables.js'
import { statementName } from './prepared-query.js'
import { type Checkpointer, startCheckpointer } from './sqlite-checkpointer.js'
import { directWriteQueue, groupCommitWriteQueue, type WriteQueue } from './write-queue.js'

export type Engine = 'sqlite' | 'postgres'

export interface StorageOptions {
  /** SQLite: how long a writer waits for another process's write lock before failing (ms). */
  busyTimeoutMs?: number
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
  /**
   * Bytes of the file the writing connection reads through a memory map (SQLite's mmap_size);
   * none by default. A read then copies nothing and makes no system call for a page the
   * operating system holds: a progress read's lookups took 44 us instead of 52-56 us on the
   * bench's 2M-row dataset. Mapped pages count in the process's resident memory (they are the
   * operating system's shared, reclaimable file cache), so keys are looked up on the read-only
   * connection, which does not map: 50,000 key lookups through a map added 19 MB to the peak
   * (167 MB).
   */
  mmapBytes?: number
  /** PostgreSQL pool size. */
  poolSize?: number
  /** PostgreSQL: connection and statement timeout (ms). */
  timeoutMs?: number
}

export interface Storage {
  readonly db: Kysely<Database>
  readonly engine: Engine
  /** PostgreSQL schema in use (undefined on SQLite). */
  readonly schema: string | undefined
  /** Request-time writes: grouped into shared commits on SQLite, direct on PostgreSQL. */
  readonly writes: WriteQueue
  /**
   * SQLite (on a file): a connection for the hottest reads (progress), run synchronously with
   * statements prepared once; the async layers of a Kysely call cost more than the lookups
   * themselves. Read it at the time of the read: it is the writing connection itself while that
   * has no transaction open (nearly always: a group commit runs whole within one turn of the
   * event loop), so it sees only committed data; otherwise the read-only connection. Each commit
   * into the file empties the page cache of every other connection, and the writer commits
   * disclosure records many times a second: on the bench's data a progress lookup took 59 µs on
   * the read-only connection with a commit between reads, 26 µs on the writer. Undefined on
   * PostgreSQL and in-memory SQLite.
   */
  readonly reader: SQLite.Database | undefined
  /**
   * Key lookups: on SQLite (on a file) the read-only connection, which maps nothing into memory
   * (see `StorageOptions.mmapBytes`); `db` elsewhere.
   */
  readonly keyLookups: Kysely<Database>
  /** A trivial round trip, for readiness checks. */
  ping(): Promise<void>
  close(): Promise<void>
}

export function engineOf(url: string): Engine {
  return /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite'
}

export function sqliteFile(url: string): string {
  const file = url.replace(/^(sqlite|file):(\/\/)?/, '')
  if (file === '') throw new Error(`DATABASE_URL "${url}" names no SQLite file`)
  return file
}

const STATEMENT_CACHE_SIZE = 200
/** How often the WAL's size is looked at until the checkpoint thread is needed. */
const CHECKPOINTER_WATCH_MS = 1000
/**
 * The WAL size that starts the checkpoint thread: SQLite's own automatic checkpoint comes at
 * 1,000 pages, about this much.
 */
const CHECKPOINTER_START_BYTES = 4 * 1024 * 1024

/**
 * Kysely prepares every statement anew; preparing costs more than running the hot queries
 * themselves. Reusing prepared statements by SQL text is safe here: better-sqlite3 is
 * synchronous, so a statement is never in use twice at once. Bounded, because multi-row
 * inserts produce a different SQL text per row count.
 */
function withStatementCache(database: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>()
  const prepare = database.prepare.bind(database)
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver)
      return (source: string) => {
        let statement = cache.get(source)
        if (statement === undefined) {
          statement = prepare(source)
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!)
          cache.set(source, statement)
        }
        return statement
      }
    },
  })
}

/**
 * The least time a transaction waits for the write lock before it fails (ms); longer when the
 * connection's busy timeout is longer (the CLI's).
 */
const BEGIN_WAIT_MS = 2000
/** The longest pause between two tries for the write lock (ms). */
const BEGIN_PAUSE_MS = 16
/**
 * Tries 1 ms apart before the pauses start doubling: the checkpoint thread's RESTART holds the
 * lock for 2-4 ms (sqlite-checkpointer.ts), and doubling from the first try (1, 2, 4, 8 ms) kept
 * writes waiting up to twice that. Enrolls at 7,000 a second, open loop: p99 8.9-9.4 ms with
 * doubling from the first try, 7.5-8.1 ms with these (two rounds each).
 */
const BEGIN_QUICK_TRIES = 8

/** The pause after the nth failed try for the write lock (ms). */
function beginPause(tries: number): number {
  return tries < BEGIN_QUICK_TRIES ? 1 : Math.min(2 ** (tries - BEGIN_QUICK_TRIES + 1), BEGIN_PAUSE_MS)
}

/**
 * Every transaction here writes (or must see one consistent state, like the catalog read), so
 * each takes the write lock when it begins. A deferred BEGIN would take it at the first write
 * instead, and if a checkpoint or another process holds it then, SQLite answers "database is
 * locked" at once, without waiting out the busy timeout, since waiting could deadlock.
 *
 * The wait for the lock does not block the event loop: better-sqlite3 is synchronous, so
 * SQLite's own busy handler would stop every request in the process while it slept (a batch
 * of request writes waiting out 250 ms behind an import's transaction held up catalog reads
 * too, then answered 503). BEGIN is tried with no busy timeout and tried again after a pause
 * of 1, 2, 4, ... 16 ms, serving requests in between, for up to `beginWaitMs`. Kysely hands the
 * connection to this transaction alone meanwhile, so nothing else runs on it with the busy
 * timeout lifted.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #database: SQLite.Database
  readonly #busyTimeoutMs: number
  readonly #beginWaitMs: number
  constructor(settings: SqliteDialectConfig, database: SQLite.Database, busyTimeoutMs: number) {
    super(settings)
    this.#database = database
    this.#busyTimeoutMs = busyTimeoutMs
    this.#beginWaitMs = Math.max(busyTimeoutMs, BEGIN_WAIT_MS)
  }
  override async beginTransaction(): Promise<void> {
    const deadline = performance.now() + this.#beginWaitMs
    for (let tries = 1; ; tries++) {
      const busy = this.#tryBegin()
      if (busy === undefined) return
      if (performance.now() >= deadline) throw busy
      await new Promise((resolve) => setTimeout(resolve, beginPause(tries)))
    }
  }
  /**
   * Takes the write lock now if it is free; the SQLITE_BUSY error if not. The timeout is set
   * with `exec`: 0.6 µs against 3.1 µs for `pragma()`, which builds a statement object to read
   * the answer back (a prepared statement cannot be reused: SQLite applies this pragma when it
   * prepares it). Every group commit begins here, so at one or two writes a batch, as in an
   * open loop, the two calls were 4% of an enroll's CPU.
   */
  #tryBegin(): Error | undefined {
    this.#database.exec('pragma busy_timeout = 0')
    try {
      this.#database.exec('begin immediate')
      return undefined
    } catch (error) {
      // SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY...): another connection has it.
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) return error as Error
      throw error
    } finally {
      this.#database.exec(`pragma busy_timeout = ${this.#busyTimeoutMs}`)
    }
  }
  /**
   * After SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or SQLITE_NOMEM SQLite may already have rolled
   * the whole transaction back by itself ("Response To Errors Within A Transaction",
   * https://www.sqlite.org/lang_transaction.html). A ROLLBACK then fails with "cannot rollback -
   * no transaction is active", and Kysely would throw that error in place of the one that says
   * what went wrong (a full disk answered 500 instead of 503).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#database.inTransaction) await super.rollbackTransaction(connection)
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #settings: SqliteDialectConfig
  readonly #database: SQLite.Database
  readonly #busyTimeoutMs: number
  /** `database` is the raw connection: it begins transactions and is asked whether one is open. */
  constructor(settings: SqliteDialectConfig, database: SQLite.Database, busyTimeoutMs: number) {
    super(settings)
    this.#settings = settings
    this.#database = database
    this.#busyTimeoutMs = busyTimeoutMs
  }
  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.#settings, this.#database, this.#busyTimeoutMs)
  }
}

function openSqlite(url: string, options: StorageOptions): Storage {
  const file = sqliteFile(url)
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  // NORMAL in WAL mode: a committed transaction survives a crash of this process (the WAL is
  // in the OS); FULL also survives power loss at the cost of an fsync per commit.
  database.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`)
  database.pragma('foreign_keys = ON')
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000
  database.pragma(`busy_timeout = ${busyTimeoutMs}`)
  if (options.pageCacheKib !== undefined) database.pragma(`cache_size = -${options.pageCacheKib}`)
  let checkpointer: Checkpointer | undefined
  let checkpointerTimer: NodeJS.Timeout | undefined
  if (options.backgroundCheckpoints === true && file !== ':memory:') {
    database.pragma('wal_autocheckpoint = 0')
    // The thread starts once the WAL holds about what SQLite would have checkpointed itself:
    // never while the server starts (its start costs about 50 ms of CPU, which on one core
    // would delay the first answer), and not at all while the service only reads (a thread is
    // a V8 instance of its own, about 9 MB). Until then the WAL grows by a second's writes.
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
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }, database, busyTimeoutMs),
  })
  // In memory there is one connection, and nothing for a second one to read.
  let readOnly: SQLite.Database | undefined
  let keyLookups = db
  if (file !== ':memory:') {
    if (options.mmapBytes !== undefined) database.pragma(`mmap_size = ${options.mmapBytes}`)
    readOnly = new SQLite(file, { readonly: true, fileMustExist: true })
    readOnly.pragma(`busy_timeout = ${busyTimeoutMs}`)
    if (options.pageCacheKib !== undefined) readOnly.pragma(`cache_size = -${options.pageCacheKib}`)
    // Destroying it closes the read-only connection.
    keyLookups = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(readOnly) }) })
  }
  return {
    db,
    engine: 'sqlite',
    schema: undefined,
    writes: groupCommitWriteQueue(db, database),
    get reader() {
      if (readOnly === undefined) return undefined
      return database.inTransaction ? readOnly : database
    },
    keyLookups,
    async ping() {
      await sql`select 1`.execute(db)
    },
    async close() {
      clearInterval(checkpointerTimer)
      await checkpointer?.stop()
      if (keyLookups !== db) await keyLookups.destroy()
      await db.destroy()
    },
  }
}

/**
 * Sends the prepared queries' statements (prepared-query.ts) as named statements: PostgreSQL
 * parses and plans each once per connection instead of on every call. Kysely sends SQL text
 * and values, which node-postgres runs unnamed; this client turns a known text into a named
 * statement and leaves any other call as it was.
 */
function nameStatements(client: PG.PoolClient, query: PG.Client['query']): void {
  client.query = function (this: PG.PoolClient, ...args: unknown[]) {
    const [text, values] = args
    const name = typeof text === 'string' && args.length === 2 ? statementName(text) : undefined
    if (name !== undefined)
      return (query as (config: PG.QueryConfig) => unknown).call(this, {
        name,
        text: text as string,
        values: values as unknown[],
      })
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as PG.PoolClient['query']
}

// Loaded only when PostgreSQL is used: an SQLite deployment starts about 0.1 s sooner without it.
const requireModule = createRequire(import.meta.url)

function openPostgres(url: string, options: StorageOptions): Storage {
  const pg = requireModule('pg') as typeof PG
  /** pg returns int8 (counts, bigserial ids) as strings; every such value here fits in a double. */
  const pgTypes = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20) return (value: string) => Number(value)
      return pg.types.getTypeParser(oid, format as 'text')
    },
  }
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('the schema in DATABASE_URL must be a lower-case SQL identifier')
  }
  parsed.searchParams.delete('schema')
  const timeoutMs = options.timeoutMs ?? 5000
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 500,
    types: pgTypes,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  })
  // A client that loses its server emits 'error' (on the pool while idle, on itself while
  // checked out); without listeners the process would crash. The query in flight is rejected
  // anyway and answers 503, and the pool replaces the client.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
    nameStatements(client, pg.Client.prototype.query)
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    engine: 'postgres',
    schema,
    writes: directWriteQueue(db),
    reader: undefined,
    keyLookups: db,
    async ping() {
      await sql`select 1`.execute(db)
    },
    async close() {
      await db.destroy()
    },
  }
}

export function openStorage(url: string, options: StorageOptions = {}): Storage {
  return engineOf(url) === 'postgres' ? openPostgres(url, options) : openSqlite(url, options)
}

const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL|READONLY)/
const NODE_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'])
/** node-postgres errors that carry no code, known by their message. */
const DRIVER_UNAVAILABLE = new RegExp(
  [
    'timeout exceeded when trying to connect',
    'Connection terminated',
    'Query read timeout',
    'Client has encountered a connection error',
  ].join('|'),
  'i',
)

/**
 * True when an error means "storage cannot serve right now" (answer 503, retry later) rather
 * than a bug (answer 500).
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (SQLITE_UNAVAILABLE.test(code) || NODE_UNAVAILABLE.has(code)) return true
    // PostgreSQL: 08 connection exception, 53 insufficient resources (53100 disk full), 57
    // operator intervention (admin shutdown, statement timeout), 58 system error (I/O), 25006
    // read-only transaction (a standby, or default_transaction_read_only during maintenance),
    // 40001/40P01 serialization failure and deadlock.
    if (/^(08|53|57|58)/.test(code) || code === '25006' || code === '40001' || code === '40P01') return true
  }
  return DRIVER_UNAVAILABLE.test(error.message)
}
