/**
 * Puts a backup in the place of a SQLite database, atomically: the backup is copied into a
 * temporary file beside the database, its audit row written there, the file flushed to the disk
 * and renamed over the database. Whatever stops it (a crash, a full disk, a kill), the database's
 * name points at the old file or at the whole restored one, never at a part.
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { Database } from '../tables.js'
import { DatabaseFileError, databaseInUse } from './database-file.js'
import { createPrivateFile, flushFile, publish, removeFiles, temporaryBeside } from './durable-files.js'

/** Pages copied per step of the backup API, as `backup` copies them. */
const PAGES_PER_STEP = 1024
/** Ids looked up per statement, well under SQLite's limit on parameters. */
const CHUNK = 500

export interface RestoreOptions {
  /** Replace the database even when some process has it open (or nobody can tell). */
  force: boolean
  onProgress?: (copiedPages: number, totalPages: number) => void
  /** Writes the restore's audit row, into the restored database before it takes the database's name. */
  audit: (db: Kysely<Database>, facts: { replaced: boolean; forced: boolean }) => Promise<void>
}

export interface RestoreReport {
  /** A database was there and was replaced. */
  replaced: boolean
  /** It was in use (or could not be checked) and --force replaced it anyway. */
  forced: boolean
  /**
   * Students the replaced database's audit log says were erased and that the backup still holds:
   * the restore brought them back. Undefined when the replaced database could not be read.
   */
  erasedInReplaced: string[] | undefined
}

/** The database is open in another process (a running server) and --force was not given. */
export class DatabaseInUseError extends Error {
  override name = 'DatabaseInUseError'
}

/** The ids of the students erased in `file`, by its audit log; undefined when it cannot be read. */
function erasedStudents(file: string): string[] | undefined {
  let database: SQLite.Database | undefined
  try {
    database = new SQLite(file, { readonly: true, fileMustExist: true })
    const rows = database.prepare(`select distinct target from audit_log where action = 'students.erase'`).all() as {
      target: string
    }[]
    return rows.map((row) => row.target.replace(/^student:/, ''))
  } catch {
    return undefined
  } finally {
    database?.close()
  }
}

/** Which of `ids` are students in `db`. */
async function present(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  const found: string[] = []
  for (let from = 0; from < ids.length; from += CHUNK) {
    const rows = await db
      .selectFrom('students')
      .select('id')
      .where('id', 'in', ids.slice(from, from + CHUNK))
      .execute()
    found.push(...rows.map((row) => row.id))
  }
  return found
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

export async function restoreDatabaseFile(
  backup: string,
  target: string,
  options: RestoreOptions,
): Promise<RestoreReport> {
  const replaced = fs.existsSync(target)
  const forced = replaced && forcedOverUse(target, options.force)
  const erased = replaced ? erasedStudents(target) : []
  const before = replaced ? fs.statSync(target) : undefined
  const temporary = temporaryBeside(target, 'restore')
  // The restored file keeps the replaced one's mode (and owner, when run as root), so that the
  // server's user can still open it.
  createPrivateFile(temporary, before === undefined ? 0o600 : before.mode & 0o777)
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
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(temporary) }) })
    let erasedInReplaced: string[] | undefined
    try {
      await options.audit(db, { replaced, forced })
      erasedInReplaced = erased === undefined ? undefined : await present(db, erased)
    } finally {
      await db.destroy()
    }
    flushFile(temporary)
    // The replaced file's write-ahead log and its index would be read as the restored file's.
    removeFiles(`${target}-wal`, `${target}-shm`)
    publish(temporary, target, true)
    return { replaced, forced, erasedInReplaced }
  } finally {
    removeFiles(temporary, `${temporary}-journal`)
  }
}
