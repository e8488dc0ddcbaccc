/**
 * `curriculum backup <file>`: a consistent copy of the SQLite database while the server runs
 * (storage/sqlite/online-backup.ts); `backup --verify <file>` checks a copy. On PostgreSQL it
 * prints the pg_dump and pg_restore commands instead (postgres-dump.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { describeDatabaseFile, openDatabaseFiles, sqliteDatabase, withProgressLine } from '../../database-files.js'
import { defineCommand } from '../../options.js'
import { CliError, type CommandResult } from '../../output.js'
import { verify } from './verify.js'

export function defineBackup(program: Command): void {
  defineCommand(
    program,
    'backup <file>',
    'Back up the SQLite database into <file> while the server runs (never replacing a file without --force); ' +
      '--verify checks a backup',
    [
      'DATABASE_URL=sqlite:data/curriculum.db curriculum backup backups/curriculum-2026-03-02.db',
      'curriculum backup --verify backups/curriculum-2026-03-02.db',
    ],
    { audit: 'database.backup' },
  )
    .option(
      '--verify',
      'check the backup <file> instead: integrity, schema (its migrations and nothing else) and row ' +
        'counts; writes nothing',
    )
    .option('--force', 'replace <file> if it exists')
    .action(act(backup))
}

async function backup(command: Command, audit: Audit): Promise<CommandResult> {
  const [file] = command.args as [string]
  const options = command.opts<{ verify?: boolean; force?: boolean }>()
  if (options.verify === true) return verify(file)
  const source = await sqliteDatabase(file, 'backup')
  if (!fs.existsSync(source)) throw new CliError(`there is no database at ${source} (DATABASE_URL): nothing to back up`)
  const destination = path.resolve(file)
  if (destination === path.resolve(source))
    throw new CliError(`${destination} is the database itself; give another file for its backup`)
  if (!fs.existsSync(path.dirname(destination)))
    throw new CliError(`the folder ${path.dirname(destination)} does not exist; nothing was written`)
  const files = await openDatabaseFiles()
  const report = await withProgressLine(
    'backing up',
    (onProgress) =>
      files.backupDatabaseFile(source, destination, {
        overwrite: options.force === true,
        onProgress,
        audit: (db) => audit.record(db, 'database', { file: destination }),
      }),
    (error) => error instanceof files.DestinationExistsError || error instanceof files.DatabaseFileError,
  )
  const described = await describeDatabaseFile(report)
  const foreign = (report.schemaDifferences?.length ?? 0) > 0
  return {
    data: { file: destination, ...described.data },
    text: [
      `backed up ${source} into ${destination} (mode 0600: it holds children's data)`,
      ...described.text,
      // The database itself holds them: someone changed its schema outside the migrations.
      ...(foreign ? ['the database holds schema objects the migrations do not make: restore refuses this backup'] : []),
    ],
  }
}
