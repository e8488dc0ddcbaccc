/**
 * Request-time writes on SQLite (the engine's `WriteQueue`, write-queue.ts): group commit.
 *
 * SQLite has one writer and pays for each commit (WAL frames for every page touched, then a
 * checkpoint); many concurrent requests committing one row each would spend most of their time
 * there. So on SQLite the writes that arrive during one turn of the event loop share one
 * transaction (group commit, as databases do with their own log): each unit runs inside a
 * savepoint, so a failing unit undoes only its own writes, and every caller's promise settles
 * after the shared COMMIT, so nothing is acknowledged before it is stored. A batch of a few
 * units may wait about a millisecond for more when that has been paying off (commit-hold.ts). A
 * failed COMMIT fails every unit of the batch. Inside a batch, prepared queries and the
 * savepoints run directly on the raw connection (direct-statements.ts), skipping the steps
 * Kysely's execution adds to each statement (figures: docs/performance.md).
 */
import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import { recordBatch } from '../../instrumentation/metrics-channels.js'
import { runsDirectly } from '../prepared-query.js'
import type { Database } from '../tables.js'
import type { WriteQueue } from '../write-queue.js'
import { CommitHold, type CommitPolicy } from './commit-hold.js'
import { directStatements } from './direct-statements.js'

/** A unit's savepoint statements, prepared once on the connection: a batch runs two or three per unit. */
interface Savepoints {
  readonly begin: SQLite.Statement
  readonly release: SQLite.Statement
  readonly rollback: SQLite.Statement
}

/** Units committed together at most; more wait for the next batch, which starts at once. */
const MAX_BATCH = 256

interface Unit {
  work: (trx: Kysely<Database>) => Promise<unknown>
  savepoint: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * @param connection - the raw connection under `db`. The batch's transaction is bound to it
 *   (`runsDirectly`), so that prepared queries and savepoints run on it directly; and it says whether
 *   a transaction is still open: after a disk-full or I/O error SQLite may have rolled the whole
 *   batch back by itself, and then no unit of it may be acknowledged.
 */
export function groupCommitWriteQueue(
  db: Kysely<Database>,
  connection: SQLite.Database,
  hold: CommitPolicy = new CommitHold(),
): WriteQueue {
  const direct = directStatements(connection)
  const savepoints: Savepoints = {
    begin: connection.prepare('savepoint unit'),
    release: connection.prepare('release unit'),
    rollback: connection.prepare('rollback to unit'),
  }
  let pending: Unit[] = []
  let scheduled = false

  function enqueue<T>(work: (trx: Kysely<Database>) => Promise<T>, savepoint: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      pending.push({ work, savepoint, resolve: resolve as (value: unknown) => void, reject })
      if (!scheduled) {
        scheduled = true
        // setImmediate, not a microtask: requests parsed in this turn of the loop join the batch.
        setImmediate(due)
      }
    })
  }

  /** The batch is due: committed now, or, when it is small and company is likely, a moment later (commit-hold.ts). */
  function due(): void {
    if (!hold.shouldHold(pending.length)) {
      void flush()
      return
    }
    const waiting = pending.length
    setTimeout(() => {
      hold.held(pending.length - waiting)
      void flush()
    }, 0)
  }

  async function flush(): Promise<void> {
    const batch = pending.length > MAX_BATCH ? pending.splice(0, MAX_BATCH) : pending
    if (batch === pending) pending = []
    if (pending.length > 0) setImmediate(flush)
    else scheduled = false
    recordBatch(batch.length)
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
    try {
      await db.transaction().execute(async (trx) => {
        runsDirectly(trx, direct)
        for (const unit of batch) outcomes.push(await runUnit(trx, unit, connection, savepoints))
      })
    } catch (error) {
      for (const unit of batch) unit.reject(error)
      return
    }
    for (let i = 0; i < batch.length; i++) {
      const outcome = outcomes[i]!
      if (outcome.ok) batch[i]!.resolve(outcome.value)
      else batch[i]!.reject(outcome.error)
    }
  }

  return {
    transaction: (work) => (db.isTransaction ? work(db) : enqueue(work, true)),
    // One statement either happens whole or not at all, so it needs no savepoint of its own.
    statement: (work) => (db.isTransaction ? work(db) : enqueue(work, false)),
  }
}

/**
 * Runs one unit of a batch. A unit's failure normally undoes only that unit; but if SQLite has
 * rolled the whole transaction back by itself (SQLITE_FULL, SQLITE_IOERR: "Response To Errors
 * Within A Transaction", https://www.sqlite.org/lang_transaction.html), the units before it
 * are gone too and the units after it would run outside any transaction. Then the unit's own
 * error is rethrown, so the whole batch fails with the cause rather than with the "no such
 * savepoint" that a ROLLBACK TO would raise in its place.
 */
async function runUnit(
  trx: Kysely<Database>,
  unit: Unit,
  connection: SQLite.Database,
  savepoints: Savepoints,
): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  if (!unit.savepoint) {
    try {
      return { ok: true, value: await unit.work(trx) }
    } catch (error) {
      if (!connection.inTransaction) throw error
      return { ok: false, error }
    }
  }
  savepoints.begin.run()
  try {
    const value = await unit.work(trx)
    savepoints.release.run()
    return { ok: true, value }
  } catch (error) {
    if (!connection.inTransaction) throw error
    savepoints.rollback.run()
    savepoints.release.run()
    return { ok: false, error }
  }
}
