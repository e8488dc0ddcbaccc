/**
 * Checks a pg_dump archive before anyone restores it: its table of contents (dump-archive.ts)
 * against the one pg_dump writes for the schema the migrations it lists make. That reference is
 * built in a scratch schema of the configured database (the migrations up to the dump's last,
 * then `pg_dump` with the flags `curriculum backup` prints), read, and dropped; nothing of the
 * dump is ever run. Needs pg_dump and pg_restore on the PATH.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { knownMigrations, migrate } from '../migrate.js'
import { dumpedRows, libpqUrl, runTool } from './client-tools.js'
import { type DumpArchive, type DumpEntry, readDumpArchive } from './dump-archive.js'
import { compareDumpEntries, type DumpDifference } from './dump-differences.js'
import { openPostgres } from './open-postgres.js'

export interface DumpInspection {
  file: string
  /** The archive format version and the pg_dump that wrote it. */
  version: string
  dumpedBy: string
  /** The schema its tables are in (`public` for a whole database); undefined when it has no migration table. */
  schema: string | undefined
  /** The migrations its migration table lists. */
  migrations: string[]
  /** Entries of its table of contents. */
  entries: number
  /** How it differs from what those migrations make; undefined when they cannot be built (none, or unknown ones). */
  differences: DumpDifference[] | undefined
}

/** Long enough for the migrations of an empty schema on a busy server. */
const TIMEOUT_MS = 60_000

/** The migrations the dump's migration table lists; undefined when its COPY statement is not the plain one. */
async function listedMigrations(file: string, archive: DumpArchive, schema: string) {
  const data = archive.entries.find(
    (entry) => entry.desc === 'TABLE DATA' && entry.namespace === schema && entry.tag === 'kysely_migration',
  )
  const copy = `COPY ${schema}.kysely_migration (name, "timestamp") FROM stdin;\n`
  if (data === undefined || data.copyStmt !== copy) return undefined
  return (await dumpedRows(file, schema, 'kysely_migration', copy)).map((fields) => fields[0]!)
}

/** The disposition period migration 0011 gave agreements by default when the dumped database was migrated. */
function dispositionDays(archive: DumpArchive, schema: string): number | undefined {
  const table = archive.entries.find((e) => e.desc === 'TABLE' && e.namespace === schema && e.tag === 'agreements')
  const match = /\n {4}disposition_days integer DEFAULT ([0-9]{1,6}) NOT NULL/.exec(table?.defn ?? '')
  return match === null ? undefined : Number(match[1])
}

/**
 * The table of contents pg_dump writes for the schema the migrations up to `last` make, built in
 * a scratch schema of `databaseUrl` and dropped again, with the scratch name made `schema`.
 */
async function migratedEntries(
  databaseUrl: string,
  last: string,
  days: number | undefined,
  schema: string,
): Promise<DumpEntry[]> {
  const scratch = `curriculum_verify_${randomBytes(6).toString('hex')}`
  const url = new URL(databaseUrl)
  url.searchParams.set('schema', scratch)
  const storage = openPostgres(url.toString(), { poolSize: 1, timeoutMs: TIMEOUT_MS })
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'curriculum-verify-'))
  try {
    await migrate(storage, last, days === undefined ? {} : { agreementDispositionDays: days })
    const file = path.join(folder, 'reference.dump')
    const { dbname, password } = libpqUrl(databaseUrl)
    await runTool(
      'pg_dump',
      ['--format=custom', '--no-owner', `--schema=${scratch}`, `--dbname=${dbname}`, `--file=${file}`],
      password,
    )
    const rename = (text: string) => text.replaceAll(scratch, schema)
    return readDumpArchive(file).entries.map((entry) => ({
      ...entry,
      tag: rename(entry.tag),
      namespace: rename(entry.namespace),
      defn: rename(entry.defn),
      dropStmt: rename(entry.dropStmt),
      copyStmt: rename(entry.copyStmt),
    }))
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
    try {
      await sql`drop schema if exists ${sql.id(scratch)} cascade`.execute(storage.db)
    } finally {
      await storage.close()
    }
  }
}

/**
 * Reads the dump `file` and compares it with what its migrations make, building that in a scratch
 * schema of `databaseUrl`. Throws DumpArchiveError when the file cannot be read as a dump or the
 * tools fail.
 */
export async function inspectPostgresDump(file: string, databaseUrl: string): Promise<DumpInspection> {
  const archive = readDumpArchive(file)
  const { version, dumpedBy, entries } = archive
  const schema = entries.find((e) => e.desc === 'TABLE' && e.tag === 'kysely_migration')?.namespace
  const base = { file, version, dumpedBy, schema, entries: entries.length }
  if (schema === undefined) return { ...base, migrations: [], differences: undefined }
  const migrations = await listedMigrations(file, archive, schema)
  if (migrations === undefined)
    return {
      ...base,
      migrations: [],
      differences: [{ change: 'changed', desc: 'TABLE DATA', tag: 'kysely_migration', namespace: schema }],
    }
  const known = knownMigrations()
  if (migrations.length === 0 || migrations.some((name) => !known.includes(name)))
    return { ...base, migrations, differences: undefined }
  const last = known.filter((name) => migrations.includes(name)).at(-1)!
  const expected = await migratedEntries(databaseUrl, last, dispositionDays(archive, schema), schema)
  return { ...base, migrations, differences: compareDumpEntries(expected, entries, schema) }
}
