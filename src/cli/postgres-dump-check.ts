/**
 * What `backup --verify` and `restore` say of a pg_dump archive: whether it holds nothing but
 * rows and the schema its migrations make (storage/postgres/dump-inspection.ts), for people and
 * for --json.
 */
import fs from 'node:fs'
import { CliError } from './output.js'
import type { DescribedFile } from './database-files.js'

const MAGIC = 'PGDMP'

/** Whether `file` starts as a pg_dump custom-format archive does. */
export function isPostgresDump(file: string): boolean {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, 'r')
    const head = Buffer.alloc(MAGIC.length)
    fs.readSync(fd, head, 0, MAGIC.length, 0)
    return head.toString('latin1') === MAGIC
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The checks of pg_dump archives, loaded when a command needs them. */
async function openDumpFiles() {
  const { postgresDumpFiles } = await import('../storage/connection.js')
  return postgresDumpFiles()
}

/** The dump `file` checked against the migrations, built in `databaseUrl` (a PostgreSQL database). */
export async function describePostgresDump(
  file: string,
  databaseUrl: string,
): Promise<DescribedFile & { schema: string | undefined }> {
  const [{ inspectPostgresDump, DumpArchiveError, describeDumpDifference }, { compareMigrations }] = await Promise.all([
    openDumpFiles(),
    import('../storage/migrate.js'),
  ])
  let report: Awaited<ReturnType<typeof inspectPostgresDump>>
  try {
    report = await inspectPostgresDump(file, databaseUrl)
  } catch (error) {
    if (error instanceof DumpArchiveError) throw new CliError(`${file}: ${error.message}; nothing was done`)
    throw error
  }
  const { schema, migrations, differences } = report
  const state = compareMigrations(migrations)
  const named = (differences ?? []).map((difference) => describeDumpDifference(difference, schema ?? ''))
  const data = {
    file,
    archive: { version: report.version, dumpedBy: report.dumpedBy, entries: report.entries },
    schema: {
      name: schema ?? null,
      migrations: migrations.length,
      last: migrations.at(-1) ?? null,
      pending: state.pending,
      unknown: state.unknown,
      differences: differences ?? null,
    },
  }
  const text = [
    `archive: pg_dump custom format ${report.version} by pg_dump ${report.dumpedBy}, ${report.entries} entries`,
    `schema: ${schema ?? 'none'}, ${migrations.length} migrations` +
      (migrations.length === 0 ? '' : `, the last ${migrations.at(-1)}`) +
      (state.unknown.length > 0 ? ` (${state.unknown.join(', ')} unknown to this version)` : ''),
    ...(differences === undefined
      ? []
      : [
          differences.length === 0
            ? 'schema objects: exactly what those migrations make'
            : `schema objects: ${differences.length} differ from what those migrations make: ${named.join('; ')}`,
        ]),
  ]
  const refusal =
    named.length > 0
      ? `${file} holds a schema the migrations do not make (${named.join('; ')}): pg_restore runs every ` +
        'statement a dump holds, and these would run in the restored service; the file was changed after it ' +
        'was taken, so restore another dump'
      : schema === undefined || migrations.length === 0
        ? `${file} holds no Curriculum API database (no migrations listed)`
        : state.unknown.length > 0
          ? `${file} was made by a newer version of the Curriculum API (it lists ${state.unknown.join(', ')}): ` +
            'this version cannot check or restore it; upgrade the code first'
          : undefined
  return { data, text, schema, ...(refusal === undefined ? {} : { refusal }) }
}

/** The signing keys the database has and restoring the dump would lose (storage/postgres/dump-signing-keys.ts). */
export async function signingKeysLost(file: string, schema: string, databaseUrl: string): Promise<string[]> {
  const { signingKeysLost: lost, DumpArchiveError } = await openDumpFiles()
  try {
    return await lost(file, schema, databaseUrl)
  } catch (error) {
    if (error instanceof DumpArchiveError) throw new CliError(`${file}: ${error.message}; nothing was done`)
    throw error
  }
}
