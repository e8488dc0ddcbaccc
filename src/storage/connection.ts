/**
 * The only module that chooses the engine, by the URL; everything else sees `Storage`
 * (storage.ts), and what belongs to one engine lives in its folder.
 *
 * - `sqlite:<file>` (or `file:<file>`, or `sqlite::memory:`): sqlite/open-sqlite.ts.
 * - `postgres://...`: postgres/open-postgres.ts; `?schema=<name>` selects (and migrations
 *   create) a schema, which lets test runs and tenants share one database without colliding.
 */
import { isPostgresUnavailable } from './postgres/unavailable.js'
import { openPostgres, type PostgresOptions } from './postgres/open-postgres.js'
import { openSqlite, type SqliteOptions, sqliteFile } from './sqlite/open-sqlite.js'
import { filesOpenToOthers } from './sqlite/private-files.js'
import { isSqliteUnavailable } from './sqlite/unavailable.js'
import type { Engine, Storage } from './storage.js'

export type { Engine, Storage } from './storage.js'
export { sqliteFile } from './sqlite/open-sqlite.js'
export type { DatabaseFileReport } from './sqlite/database-file.js'
export type { RestoreReport } from './sqlite/restore.js'

/** Each engine's options; an engine ignores the other's. */
export type StorageOptions = SqliteOptions & PostgresOptions

export function engineOf(url: string): Engine {
  return /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite'
}

export function openStorage(url: string, options: StorageOptions = {}): Storage {
  return engineOf(url) === 'postgres' ? openPostgres(url, options) : openSqlite(url, options)
}

/**
 * True when an error means "storage cannot serve right now" (answer 503, retry later) rather
 * than a bug (answer 500).
 */
export function isStorageUnavailable(error: unknown): boolean {
  return error instanceof Error && (isSqliteUnavailable(error) || isPostgresUnavailable(error))
}

/**
 * The database's files that users other than their owner can read or write: SQLite's file, `-wal`
 * and `-shm` (none in memory or on PostgreSQL, whose files are the database server's).
 */
export function databaseFilesOpenToOthers(url: string): string[] {
  if (engineOf(url) === 'postgres') return []
  const file = sqliteFile(url)
  return file === ':memory:' ? [] : filesOpenToOthers(file)
}

/** SQLite's file operations (backup, verify, restore), for the operator's commands only. */
export function sqliteDatabaseFiles(): Promise<typeof import('./sqlite/database-files.js')> {
  return import('./sqlite/database-files.js')
}

/** The checks of pg_dump archives (backup --verify, restore), for the operator's commands only. */
export function postgresDumpFiles(): Promise<typeof import('./postgres/dump-files.js')> {
  return import('./postgres/dump-files.js')
}
