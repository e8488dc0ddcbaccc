/**
 * On PostgreSQL, backups are PostgreSQL's own tools' job (pg_dump and pg_restore: consistent,
 * online, and restorable into another server or version). `backup` and `restore` print the exact
 * commands for the configured database instead, `restore` only for a dump it has checked
 * (postgres-dump-check.ts), and the docs give the same (docs/backup-and-restore.md, "PostgreSQL").
 */
import { CliError } from './output.js'

/** Characters a POSIX shell reads literally, so the word needs no quotes. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/

export function shellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

export interface PostgresDumpCommands {
  backup: string
  restore: string
}

/**
 * pg_dump and pg_restore commands for `databaseUrl` and the dump `file`. The password is left out
 * (give it in PGPASSWORD or ~/.pgpass), and the service's own `schema` parameter, which libpq does
 * not know, becomes pg_dump's `--schema`. pg_restore is not given it: the dump holds that schema
 * only, and restoring with `--schema` would skip creating the schema itself (after a drop, say).
 */
export function postgresDumpCommands(databaseUrl: string, file: string): PostgresDumpCommands {
  const url = new URL(databaseUrl)
  const schema = url.searchParams.get('schema')
  url.searchParams.delete('schema')
  url.password = ''
  const database = `--dbname=${shellWord(url.toString())}`
  const onlySchema = schema === null ? [] : [`--schema=${shellWord(schema)}`]
  return {
    backup: ['pg_dump', '--format=custom', '--no-owner', ...onlySchema, database, `--file=${shellWord(file)}`].join(
      ' ',
    ),
    restore: [
      'pg_restore',
      '--clean',
      '--if-exists',
      '--no-owner',
      '--single-transaction',
      '--exit-on-error',
      database,
      shellWord(file),
    ].join(' '),
  }
}

export interface KeepSettingsCommands {
  /** Before pg_restore: the database's settings rows into a file of SQL beside the dump. */
  before: string
  /** After it: the restored settings replaced by those rows, in one transaction. */
  after: string
}

/**
 * pg_restore replaces the settings table with the dump's: these keep the database's own settings
 * (its certificate signing keys among them) across the restore of `file`, whose tables are in `schema`.
 */
export function keepSettingsCommands(databaseUrl: string, file: string, schema: string): KeepSettingsCommands {
  const url = new URL(databaseUrl)
  url.searchParams.delete('schema')
  url.password = ''
  const database = `--dbname=${shellWord(url.toString())}`
  const settings = shellWord(`${file}.settings.sql`)
  const table = `${schema}.settings`
  return {
    before: [
      'pg_dump',
      '--data-only',
      '--no-owner',
      `--table=${shellWord(table)}`,
      database,
      `--file=${settings}`,
    ].join(' '),
    after: [
      'psql',
      '--single-transaction',
      '--set=ON_ERROR_STOP=1',
      database,
      `--command=${shellWord(`truncate ${table}`)}`,
      `--file=${settings}`,
    ].join(' '),
  }
}

/** What `restore` learned of a dump before giving the commands (postgres-dump-check.ts). */
export interface CheckedDump {
  text: readonly string[]
  data: Record<string, unknown>
  /** The signing keys the database has and the dump lacks, with the commands that keep them. */
  keep?: { keys: readonly string[]; commands: KeepSettingsCommands }
}

/**
 * The answer of `backup` and `restore` on PostgreSQL: nothing done, and the commands that do it;
 * `restore` gives them once it has checked the dump.
 */
export function usePostgresTools(
  databaseUrl: string,
  file: string,
  command: 'backup' | 'restore',
  checked?: CheckedDump,
): CliError {
  const commands = postgresDumpCommands(databaseUrl, file)
  const keep = checked?.keep
  return new CliError(
    (checked === undefined ? '' : `${file} is a sound dump:\n  ${checked.text.join('\n  ')}\n`) +
      `DATABASE_URL is a PostgreSQL database: ${command === 'backup' ? 'back it up' : 'restore it'} with ` +
      `PostgreSQL's own tools (nothing was done). Back up:\n  ${commands.backup}\n` +
      (keep === undefined
        ? ''
        : `The database has certificate signing keys the dump lacks (${keep.keys.join(', ')}): pg_restore would ` +
          "replace them with the dump's, and the certificates of deletion they signed would stop verifying. " +
          `Keep the database's settings, its keys among them: before pg_restore,\n  ${keep.commands.before}\n`) +
      `Restore (stop the servers first):\n  ${commands.restore}` +
      (keep === undefined
        ? ''
        : `\nthen put the settings back (and delete ${file}.settings.sql: it holds the private key):\n  ` +
          keep.commands.after),
    [],
    1,
    {
      commands,
      ...(checked === undefined ? {} : { checked: checked.data }),
      ...(keep === undefined ? {} : { keepSettings: { keys: keep.keys, ...keep.commands } }),
    },
  )
}
