/**
 * Puts a backup in the place of a SQLite database, atomically: the backup is copied into a
 * temporary file beside the database, whose schema must be exactly what its migrations make
 * (schema-differences.ts); the replaced database's history since the backup
 * (restore-history.ts) and its certificate signing keys (restore-signing-keys.ts) are carried
 * over, the change feed restarted and the audit row written there; the file is flushed to the
 * disk and renamed over the database. Whatever stops it (a crash, a full disk, a kill), the
 * database's name points at the old file or at the whole restored one, never at a part.
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { restartChangeLog } from '../change-feed-retention-repository.js'
import type { Database } from '../tables.js'
import { DatabaseFileError, databaseInUse } from './database-file.js'
import { createPrivateFile, flushFile, publish, removeFiles, temporaryBeside } from './durable-files.js'
import { type CarriedHistory, carryHistory } from './restore-history.js'
import { type CarriedSigningKeys, carrySigningKeys } from './restore-signing-keys.js'
import { schemaDifferences, schemaFacts, schemaRefusal } from './schema-differences.js'

/** Pages copied per step of the backup API, as `backup` copies them. */
const PAGES_PER_STEP = 1024

export interface RestoreOptions {
  /** Replace the database even when some process has it open (or nobody can tell). */
  force: boolean
  onProgress?: (copiedPages: number, totalPages: number) => void
  /** Writes the restore's audit row, into the restored database before it takes the database's name. */
  audit: (db: Kysely<Database>, facts: RestoreFacts) => Promise<void>
}

/** What the restore's audit row says it did. */
export interface RestoreFacts {
  replaced: boolean
  forced: boolean
  carried?: CarriedHistory['carried']
  undoneActions?: number
  notCarried?: string
  /** Signing key rows written from the replaced database, or why none could be. */
  signingKeys?: CarriedSigningKeys
  changeFeedFloor: number
}

export interface RestoreReport {
  /** A database was there and was replaced. */
  replaced: boolean
  /** It was in use (or could not be checked) and --force replaced it anyway. */
  forced: boolean
  /** What was kept of the replaced database, or why nothing could be; undefined when there was none. */
  history: CarriedHistory | { notCarried: string } | undefined
  /** The signing key rows written from the replaced database, or why none could be; undefined when there was none. */
  signingKeys: CarriedSigningKeys | undefined
  /** The change feed's new floor: every cursor handed out before the restore answers cursor_expired. */
  changeFeedFloor: number
}

/** The database is open in another process (a running server) and --force was not given. */
export class DatabaseInUseError extends Error {
  override name = 'DatabaseInUseError'
}

/**
 * Refuses (throws) when `target` is in use, or cannot be checked, unless `force`; returns whether
 * it is being replaced by force.
 */
function forcedOverUse(target: string, force: boolean): boolean {
  let inUse: boolean
  try {
    inUse = databaseInUse(target)
  } catch (error) {
    if (!(error instanceof DatabaseFileError)) throw error
    if (!force)
      throw new DatabaseFileError(
        `${error.message}; if no server or command uses it, restore with --force; nothing was changed`,
      )
    return true
  }
  if (inUse && !force)
    throw new DatabaseInUseError(
      `${target} is open in another process, most likely the running server: stop the server (and any ` +
        'command using the database), then restore again; nothing was changed',
    )
  return inUse
}

/**
 * Throws unless `copy`'s schema is exactly what its migrations make. The caller inspected the
 * backup file already; this checks the copy itself, before anything writes into it (a planted
 * trigger would fire), since the file may have changed in between.
 */
async function refuseForeignSchema(copy: SQLite.Database, backup: string): Promise<void> {
  const differences = await schemaDifferences(schemaFacts(copy))
  if (differences === undefined)
    throw new DatabaseFileError(`${backup} lists no migrations this version knows; nothing was changed`)
  if (differences.length > 0) throw new DatabaseFileError(`${schemaRefusal(backup, differences)}; nothing was changed`)
}

export async function restoreDatabaseFile(
  backup: string,
  target: string,
  options: RestoreOptions,
): Promise<RestoreReport> {
  const replaced = fs.existsSync(target)
  const forced = replaced && forcedOverUse(target, options.force)
  const before = replaced ? fs.statSync(target) : undefined
  const temporary = temporaryBeside(target, 'restore')
  // The restored file is the owner's alone, whatever the replaced one's mode was, and keeps the
  // replaced one's owner when run as root, so that the server's user can still open it.
  createPrivateFile(temporary)
  try {
    if (before !== undefined && process.getuid?.() === 0) fs.chownSync(temporary, before.uid, before.gid)
    const reader = new SQLite(backup, { readonly: true, fileMustExist: true })
    try {
      await reader.backup(temporary, {
        progress: ({ totalPages, remainingPages }) => {
          options.onProgress?.(totalPages - remainingPages, totalPages)
          return PAGES_PER_STEP
        },
      })
    } finally {
      reader.close()
    }
    const copy = new SQLite(temporary)
    try {
      await refuseForeignSchema(copy, backup)
    } catch (error) {
      copy.close()
      throw error
    }
    const history = replaced ? carryHistory(copy, target) : undefined
    const signingKeys = replaced ? carrySigningKeys(copy, target) : undefined
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: copy }) })
    // A backup older than the change log (migration 0006) has none to restart: its numbers start
    // from the rows the migration counts, which no partner can hold yet.
    const hasChangeLog = copy.prepare(`select 1 from sqlite_master where name = 'student_changes'`).get() !== undefined
    let changeFeedFloor = 0
    try {
      if (hasChangeLog)
        changeFeedFloor = await restartChangeLog(
          db,
          history === undefined || 'notCarried' in history ? undefined : history.changeCounter,
        )
      await options.audit(db, {
        replaced,
        forced,
        ...(history === undefined
          ? {}
          : 'notCarried' in history
            ? { notCarried: history.notCarried }
            : { carried: history.carried, undoneActions: history.undone.length }),
        ...(signingKeys === undefined ? {} : { signingKeys }),
        changeFeedFloor,
      })
    } finally {
      await db.destroy()
    }
    flushFile(temporary)
    // The replaced file's write-ahead log and its index would be read as the restored file's.
    removeFiles(`${target}-wal`, `${target}-shm`)
    publish(temporary, target, true)
    return { replaced, forced, history, signingKeys, changeFeedFloor }
  } finally {
    removeFiles(temporary, `${temporary}-journal`)
  }
}
