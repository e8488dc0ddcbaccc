/**
 * A backup of a SQLite database while the server keeps writing, with SQLite's online backup API
 * (https://www.sqlite.org/backup.html).
 *
 * The copy is consistent: it is the database as of one moment. The backup API restarts from the
 * first page whenever another connection writes between two of its steps, which under a steady
 * stream of enrolls makes it start over again and again; so the source connection holds one read transaction
 * open across all the steps, and in WAL mode that snapshot stays fixed while the server goes on
 * committing (readers and the writer do not wait for each other). The write-ahead log cannot be
 * checkpointed past the snapshot meanwhile, so it grows by what is written during the backup.
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { Database } from '../tables.js'
import { DatabaseFileError, type DatabaseFileReport, inspectDatabaseFile } from './database-file.js'
import { createPrivateFile, flushFile, publish, removeFiles, temporaryBeside } from './durable-files.js'

/** Pages copied per step: 4 MiB at the default page size, a fraction of a second each. */
const PAGES_PER_STEP = 1024
/** How long the audit row's write waits for the server's writes. */
const BUSY_TIMEOUT_MS = 10_000

export interface BackupOptions {
  /** Replace `destination` if it exists; otherwise a backup never replaces a file. */
  overwrite: boolean
  onProgress?: (copiedPages: number, totalPages: number) => void
  /**
   * Writes the backup's audit row, called twice with the same row: into the copy (so a database
   * restored from it says when and by whom its backup was taken), then into the source, before
   * the copy gets its name.
   */
  audit: (db: Kysely<Database>) => Promise<void>
}

/** Thrown before anything is written when the destination exists and `overwrite` is off. */
export class DestinationExistsError extends Error {
  override name = 'DestinationExistsError'
}

function kyselyOn(database: SQLite.Database): Kysely<Database> {
  // Destroying it closes `database`.
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) })
}

/** Copies every page of `source`'s snapshot into `temporary`, which must exist (empty). */
async function copyPages(source: SQLite.Database, temporary: string, options: BackupOptions): Promise<void> {
  // A read transaction started here (a read is what starts it) holds the snapshot for every step.
  source.exec('BEGIN')
  try {
    const audited = source.prepare(`select 1 from sqlite_master where type = 'table' and name = 'audit_log'`).get()
    if (audited === undefined)
      throw new DatabaseFileError(
        `${source.name} holds no Curriculum API database (it has no tables): nothing to back up`,
      )
    await source.backup(temporary, {
      progress: ({ totalPages, remainingPages }) => {
        options.onProgress?.(totalPages - remainingPages, totalPages)
        return PAGES_PER_STEP
      },
    })
  } finally {
    source.exec('COMMIT')
  }
}

/**
 * Backs up the database `source` (a file the server may be writing) into `destination`, which
 * appears only once it is complete, checked and on the disk, with mode 0600. Returns the copy's
 * inspection (database-file.ts).
 */
export async function backupDatabaseFile(
  source: string,
  destination: string,
  options: BackupOptions,
): Promise<DatabaseFileReport> {
  if (!options.overwrite && fs.existsSync(destination))
    throw new DestinationExistsError(`${destination} exists; give another file, or --force to replace it`)
  const temporary = temporaryBeside(destination, 'backup')
  createPrivateFile(temporary)
  let reader: SQLite.Database | undefined
  try {
    reader = new SQLite(source, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS })
    await copyPages(reader, temporary, options)
    // The copy carries the source's WAL mode; in rollback mode it is one self-contained file,
    // which opening read-only (to verify it) leaves alone.
    const copy = new SQLite(temporary)
    copy.pragma('journal_mode = DELETE')
    const copyDb = kyselyOn(copy)
    try {
      await options.audit(copyDb)
    } finally {
      await copyDb.destroy()
    }
    const report = await inspectDatabaseFile(temporary)
    if (report.integrity !== 'ok')
      throw new Error(`the copy failed its integrity check: ${report.integrity.join('; ')}`)
    flushFile(temporary)
    const sourceDb = kyselyOn(reader)
    reader = undefined
    try {
      await options.audit(sourceDb)
    } finally {
      await sourceDb.destroy()
    }
    publish(temporary, destination, options.overwrite)
    return { ...report, file: destination }
  } catch (error) {
    if (error instanceof SQLite.SqliteError)
      throw new DatabaseFileError(`cannot back up ${source}: ${error.message} (${error.code})`)
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new DestinationExistsError(`${destination} appeared during the backup; nothing was replaced`)
    throw error
  } finally {
    reader?.close()
    removeFiles(temporary, `${temporary}-journal`, `${temporary}-wal`, `${temporary}-shm`)
  }
}
