/**
 * What `backup` and `restore` share: the configured SQLite file, the progress line, and what a
 * database file's inspection means to an operator (is it sound, can this version restore it).
 */
import type { DatabaseFileReport } from '../storage/connection.js'
import { CliError } from './output.js'
import { count, ProgressLine } from './progress-bar.js'
import { usePostgresTools } from './postgres-dump.js'

/** SQLite's file operations, loaded when a command needs them (program.ts). */
export async function openDatabaseFiles() {
  const { sqliteDatabaseFiles } = await import('../storage/connection.js')
  return sqliteDatabaseFiles()
}

/**
 * The SQLite file DATABASE_URL names. On PostgreSQL the command's answer is the pg_dump and
 * pg_restore commands for `file`.
 */
export async function sqliteDatabase(file: string, command: 'backup' | 'restore'): Promise<string> {
  const [{ loadConfig }, { engineOf, sqliteFile }] = await Promise.all([
    import('../config.js'),
    import('../storage/connection.js'),
  ])
  const { databaseUrl } = loadConfig()
  if (engineOf(databaseUrl) === 'postgres') throw usePostgresTools(databaseUrl, file, command)
  const database = sqliteFile(databaseUrl)
  if (database === ':memory:')
    throw new CliError(`DATABASE_URL names an in-memory database: there is no file to ${command}`)
  return database
}

/** DATABASE_URL when it names a PostgreSQL database. */
export async function postgresDatabaseUrl(): Promise<string | undefined> {
  const [{ loadConfig }, { engineOf }] = await Promise.all([import('../config.js'), import('../storage/connection.js')])
  const { databaseUrl } = loadConfig()
  return engineOf(databaseUrl) === 'postgres' ? databaseUrl : undefined
}

function progressText(doing: string, copied: number, total: number): string {
  const percent = total === 0 ? 100 : Math.floor((copied / total) * 100)
  return `${doing}: ${percent}% (${count(copied)} of ${count(total)} pages)`
}

/**
 * Runs a copy of a database file under a progress line; an `expected` error (the operator's to
 * act on, not a bug) becomes a CliError with its message.
 */
export async function withProgressLine<T>(
  doing: string,
  copy: (onProgress: (copied: number, total: number) => void) => Promise<T>,
  expected: (error: unknown) => boolean,
): Promise<T> {
  const bar = new ProgressLine()
  try {
    return await copy((copied, total) => bar.update(progressText(doing, copied, total)))
  } catch (error) {
    if (expected(error)) throw new CliError((error as Error).message)
    throw error
  } finally {
    bar.clear()
  }
}

/** Inspects a database file and describes it; a file that is not one is the operator's error, `consequence` added. */
export async function inspectFile(
  file: string,
  consequence = '',
): Promise<{ report: DatabaseFileReport; described: DescribedFile }> {
  const files = await openDatabaseFiles()
  let report: DatabaseFileReport
  try {
    report = await files.inspectDatabaseFile(file)
  } catch (error) {
    if (error instanceof files.DatabaseFileError) throw new CliError(`${error.message}${consequence}`)
    throw error
  }
  return { report, described: await describeDatabaseFile(report) }
}

export interface DescribedFile {
  data: Record<string, unknown>
  text: string[]
  /** Why this version cannot restore the file, if it cannot. */
  refusal?: string
}

/** The inspection for people and for --json, and whether this version of the code can restore it. */
export async function describeDatabaseFile(report: DatabaseFileReport): Promise<DescribedFile> {
  const [{ compareMigrations }, { describeDifference, schemaRefusal }] = await Promise.all([
    import('../storage/migrate.js'),
    openDatabaseFiles(),
  ])
  const state = compareMigrations(report.migrations)
  const last = report.migrations.at(-1) ?? null
  const differences = report.schemaDifferences
  const data = {
    bytes: report.bytes,
    pages: report.pages,
    integrity: report.integrity,
    schema: {
      migrations: report.migrations.length,
      last,
      pending: state.pending,
      unknown: state.unknown,
      differences: differences ?? null,
    },
    counts: report.counts,
  }
  const schemaLine =
    report.migrations.length === 0
      ? 'schema: no migrations listed'
      : state.unknown.length > 0
        ? `schema: ${report.migrations.length} migrations, ${state.unknown.length} unknown to this version ` +
          `(${state.unknown.join(', ')})`
        : `schema: ${report.migrations.length} migrations, the last ${last}` +
          (state.pending.length === 0
            ? '; this version knows them all'
            : `; ${state.pending.length} newer ones pending, which the server applies when it starts`)
  const text = [
    `size: ${count(report.bytes)} bytes (${count(report.pages)} pages)`,
    `integrity: ${report.integrity === 'ok' ? 'ok' : report.integrity.join('; ')}`,
    schemaLine,
    ...(differences === undefined
      ? []
      : [
          differences.length === 0
            ? 'schema objects: exactly what those migrations make'
            : `schema objects: ${differences.length} differ from what those migrations make: ` +
              differences.map(describeDifference).join('; '),
        ]),
    `rows: ${Object.entries(report.counts)
      .map(([table, rows]) => `${table} ${count(rows)}`)
      .join(', ')}`,
  ]
  const refusal =
    report.integrity !== 'ok'
      ? `${report.file} failed its integrity check: it cannot be restored`
      : report.migrations.length === 0 || report.counts.audit_log === undefined
        ? `${report.file} holds no Curriculum API database (no migrations listed)`
        : state.unknown.length > 0
          ? `${report.file} was made by a newer version of the Curriculum API (it lists ` +
            `${state.unknown.join(', ')}): this version cannot restore it; upgrade the code first`
          : differences !== undefined && differences.length > 0
            ? schemaRefusal(report.file, differences)
            : undefined
  return { data, text, ...(refusal === undefined ? {} : { refusal }) }
}
