/**
 * SQLite transactions that take the write lock when they begin, and wait for it without blocking
 * the event loop: the Kysely dialect open-sqlite.ts opens the writing connection with.
 */
import type SQLite from 'better-sqlite3'
import { type DatabaseConnection, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely'

/**
 * The least time a transaction waits for the write lock before it fails (ms); longer when the
 * connection's busy timeout is longer (the CLI's).
 */
const BEGIN_WAIT_MS = 2000
/** The longest pause between two tries for the write lock (ms). */
const BEGIN_PAUSE_MS = 16
/**
 * Tries 1 ms apart before the pauses start doubling: the checkpoint thread's RESTART holds the
 * lock only briefly (checkpointer.ts), and pauses doubling from the first try (1, 2, 4, 8 ms)
 * kept writes waiting up to twice as long as it did (figures: docs/performance.md).
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
 * of request writes waiting out the busy timeout behind an import's transaction held up
 * catalog reads too, then answered 503). BEGIN is tried with no busy timeout and tried again
 * after a pause of 1, 2, 4, ... 16 ms, serving requests in between, for up to `beginWaitMs`.
 * Kysely hands the connection to this transaction alone meanwhile, so nothing else runs on it
 * with the busy timeout lifted.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #database: SQLite.Database
  readonly #busyTimeoutMs: number
  readonly #beginWaitMs: number
  constructor(settings: SqliteDialectConfig, database: SQLite.Database, busyTimeoutMs: number, beginWaitMs?: number) {
    super(settings)
    this.#database = database
    this.#busyTimeoutMs = busyTimeoutMs
    this.#beginWaitMs = beginWaitMs ?? Math.max(busyTimeoutMs, BEGIN_WAIT_MS)
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
   * with `exec`, not `pragma()`, which builds a statement object to read the answer back (a
   * prepared statement cannot be reused: SQLite applies this pragma when it prepares it). Every
   * group commit begins here, so at one or two writes a batch, as in an open loop, these two
   * calls show in an enroll's CPU (figures: docs/performance.md).
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

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #settings: SqliteDialectConfig
  readonly #database: SQLite.Database
  readonly #busyTimeoutMs: number
  readonly #beginWaitMs: number | undefined
  /**
   * `database` is the raw connection: it begins transactions and is asked whether one is open.
   * `beginWaitMs`: how long BEGIN keeps trying for the write lock; the longer of the busy timeout
   * and 2 s when not given.
   */
  constructor(settings: SqliteDialectConfig, database: SQLite.Database, busyTimeoutMs: number, beginWaitMs?: number) {
    super(settings)
    this.#settings = settings
    this.#database = database
    this.#busyTimeoutMs = busyTimeoutMs
    this.#beginWaitMs = beginWaitMs
  }
  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.#settings, this.#database, this.#busyTimeoutMs, this.#beginWaitMs)
  }
}
