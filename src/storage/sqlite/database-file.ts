/**
 * A SQLite database file looked at from outside the server: whether it is a whole, sound SQLite
 * database and what it holds (for `backup --verify` and `restore`), and whether some process has
 * it open (a running server, or a command).
 */
import fs from 'node:fs'
import SQLite from 'better-sqlite3'
import { type SchemaDifference, type SchemaFacts, schemaDifferences, schemaFacts } from './schema-differences.js'

/** The file is not a sound SQLite database; the message says what is wrong with it. */
export class DatabaseFileError extends Error {
  override name = 'DatabaseFileError'
}

export interface DatabaseFileReport {
  file: string
  bytes: number
  pageSize: number
  pages: number
  /** `ok`, or the first problems `PRAGMA integrity_check` found. */
  integrity: 'ok' | string[]
  /** The migrations its migration table lists, in the order they were applied. */
  migrations: string[]
  /**
   * How its tables, indexes, triggers and views differ from what those migrations make (none: []);
   * undefined when it lists no migrations, or some this version does not know.
   */
  schemaDifferences: SchemaDifference[] | undefined
  /** Rows of the main tables it has. */
  counts: Record<string, number>
}

/** The tables whose row counts an operator compares between a database and its backup. */
const MAIN_TABLES = [
  'organisations',
  'agreements',
  'api_keys',
  'accounts',
  'students',
  'student_organisations',
  'progress',
  'disclosures',
  'webhook_endpoints',
  'audit_log',
]

const MAGIC = 'SQLite format 3\0'
const HEADER_BYTES = 100
/** Problems listed by the integrity check at most: a badly damaged file would list thousands. */
const MAX_PROBLEMS = 20

/**
 * Checks the 100-byte header (https://www.sqlite.org/fileformat.html#the_database_header): the
 * magic string, and the page count it records against the file's size, so that a truncated copy
 * is named as such rather than as "malformed".
 */
function checkHeader(file: string, bytes: number): void {
  if (bytes === 0) throw new DatabaseFileError(`${file} is empty: it is not a database or a backup`)
  const header = Buffer.alloc(HEADER_BYTES)
  const fd = fs.openSync(file, 'r')
  try {
    fs.readSync(fd, header, 0, HEADER_BYTES, 0)
  } finally {
    fs.closeSync(fd)
  }
  if (bytes < HEADER_BYTES || header.toString('latin1', 0, MAGIC.length) !== MAGIC)
    throw new DatabaseFileError(`${file} is not a SQLite database`)
  const rawPageSize = header.readUInt16BE(16)
  const pageSize = rawPageSize === 1 ? 65_536 : rawPageSize
  const pages = header.readUInt32BE(28)
  // The recorded page count is valid only when the change counter matches "version-valid-for".
  const countValid = pages > 0 && header.readUInt32BE(24) === header.readUInt32BE(92)
  if (countValid && bytes < pages * pageSize)
    throw new DatabaseFileError(
      `${file} is truncated: it has ${bytes} bytes and its header says ${pages * pageSize} (an interrupted copy?)`,
    )
}

/** A WAL-mode file's side files that opening it read-only creates, for removal afterwards. */
function sideFilesAbsent(file: string): string[] {
  return [`${file}-wal`, `${file}-shm`].filter((side) => !fs.existsSync(side))
}

/**
 * Opens `file` read-only and checks it whole: header, `PRAGMA integrity_check`, the migrations
 * it lists, its schema against theirs (schema-differences.ts) and the rows of its main tables.
 * Throws DatabaseFileError when it is no sound SQLite database; a report with integrity problems
 * or schema differences otherwise.
 */
export async function inspectDatabaseFile(file: string): Promise<DatabaseFileReport> {
  let bytes: number
  try {
    bytes = fs.statSync(file).size
  } catch (error) {
    throw new DatabaseFileError(`cannot read ${file}: ${(error as Error).message}`)
  }
  checkHeader(file, bytes)
  if (fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0)
    throw new DatabaseFileError(
      `${file} has a write-ahead log beside it (${file}-wal): it is a database in use or left by a stopped ` +
        'server, not a backup; make a backup of it with `curriculum backup`',
    )
  const created = sideFilesAbsent(file)
  let database: SQLite.Database | undefined
  let report: Omit<DatabaseFileReport, 'schemaDifferences'> & { schema: SchemaFacts }
  try {
    database = new SQLite(file, { readonly: true, fileMustExist: true })
    const problems = (database.pragma(`integrity_check(${MAX_PROBLEMS})`) as { integrity_check: string }[]).map(
      (row) => row.integrity_check,
    )
    const schema = schemaFacts(database)
    const tables = new Set(schema.objects.filter((object) => object.type === 'table').map((object) => object.name))
    const counts: Record<string, number> = {}
    for (const table of MAIN_TABLES.filter((name) => tables.has(name)))
      counts[table] = (database.prepare(`select count(*) as n from "${table}"`).get() as { n: number }).n
    report = {
      file,
      bytes,
      pageSize: Number(database.pragma('page_size', { simple: true })),
      pages: Number(database.pragma('page_count', { simple: true })),
      integrity: problems.length === 1 && problems[0] === 'ok' ? 'ok' : problems,
      migrations: schema.migrations,
      counts,
      schema,
    }
  } catch (error) {
    if (error instanceof SQLite.SqliteError)
      throw new DatabaseFileError(`${file} is damaged: ${error.message} (${error.code})`)
    throw error
  } finally {
    database?.close()
    removeEmptySideFiles(created)
  }
  const { schema, ...rest } = report
  return { ...rest, schemaDifferences: await schemaDifferences(schema) }
}

function removeEmptySideFiles(files: readonly string[]): void {
  for (const side of files) {
    try {
      if (fs.statSync(side).size === 0 || side.endsWith('-shm')) fs.rmSync(side)
    } catch {
      // Not created after all.
    }
  }
}

/**
 * Whether another connection has `file` open: a running server (it keeps its connections open)
 * or a command. Every SQLite connection to a file in WAL mode (the server always opens its
 * database so) holds a shared lock on it while open, so an exclusive lock is refused exactly
 * then; asked without waiting. Locks held by a
 * process end with it, so a crashed server does not count. Throws DatabaseFileError when the file
 * is no database SQLite can open, since then nobody can tell.
 */
export function databaseInUse(file: string): boolean {
  let database: SQLite.Database | undefined
  try {
    database = new SQLite(file, { fileMustExist: true, timeout: 0 })
    database.pragma('locking_mode = EXCLUSIVE')
    database.exec('BEGIN EXCLUSIVE')
    database.exec('COMMIT')
    return false
  } catch (error) {
    if (error instanceof SQLite.SqliteError && error.code === 'SQLITE_BUSY') return true
    throw new DatabaseFileError(
      `cannot tell whether ${file} is in use: ${(error as Error).message}${
        error instanceof SQLite.SqliteError ? ` (${error.code})` : ''
      }`,
    )
  } finally {
    // Closing the last connection folds a crashed server's write-ahead log into the file.
    database?.close()
  }
}
