/**
 * `curriculum restore <file>`: puts a backup in the place of the SQLite database, once the
 * backup has passed its integrity check and its schema is exactly what migrations this version
 * knows make (storage/sqlite/schema-differences.ts), and only while
 * no server has the database open (storage/sqlite/restore.ts). On PostgreSQL it prints the
 * pg_restore command instead.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import type { RestoreReport } from '../../storage/connection.js'
import type { Audit } from '../audit.js'
import { act } from '../command-action.js'
import {
  inspectFile,
  openDatabaseFiles,
  postgresDatabaseUrl,
  sqliteDatabase,
  withProgressLine,
} from '../database-files.js'
import { defineCommand } from '../options.js'
import { CliError, type CommandResult, plural } from '../output.js'
import { keepSettingsCommands, usePostgresTools } from '../postgres-dump.js'
import { describePostgresDump, signingKeysLost } from '../postgres-dump-check.js'

export function defineRestore(program: Command): void {
  defineCommand(
    program,
    'restore <file>',
    'Replace the SQLite database with the backup <file> (stop the server first); checks the backup before',
    ['DATABASE_URL=sqlite:data/curriculum.db curriculum restore backups/curriculum-2026-03-02.db'],
    { audit: 'database.restore' },
  )
    .option(
      '--force',
      'replace the database even while a process has it open (a running server keeps writing into the ' +
        'replaced file, and that is lost: restart it at once)',
    )
    .action(act(restore))
}

async function restore(command: Command, audit: Audit): Promise<CommandResult> {
  const [file] = command.args as [string]
  const force = command.opts<{ force?: boolean }>().force === true
  const postgres = await postgresDatabaseUrl()
  if (postgres !== undefined) throw await checkedPostgresRestore(file, postgres)
  const target = path.resolve(await sqliteDatabase(file, 'restore'))
  const backup = path.resolve(file)
  if (backup === target) throw new CliError(`${backup} is the database itself; give a backup of it`)
  if (!fs.existsSync(path.dirname(target)))
    throw new CliError(`the folder ${path.dirname(target)} (DATABASE_URL) does not exist; nothing was changed`)
  const { described } = await inspectFile(backup, '; nothing was changed')
  if (described.refusal !== undefined)
    throw new CliError(`${described.refusal}; nothing was changed`, [], 1, described.data)
  const files = await openDatabaseFiles()
  const restored = await withProgressLine(
    'restoring',
    (onProgress) =>
      files.restoreDatabaseFile(backup, target, {
        force,
        onProgress,
        audit: (db, facts) => audit.record(db, 'database', { from: backup, ...facts }),
      }),
    (error) => error instanceof files.DatabaseInUseError || error instanceof files.DatabaseFileError,
  )
  return {
    data: { database: target, from: backup, ...restored, ...described.data },
    text: [
      `restored ${backup} into ${target}`,
      ...described.text,
      ...(restored.forced
        ? ['the replaced database was in use (--force): restart the server now; what it wrote since is lost']
        : ['start the server: it serves the restored database (and applies any pending migrations)']),
      ...historyLines(restored.history),
      ...signingKeyLines(restored.signingKeys),
      `the change feed restarts at ${restored.changeFeedFloor}: partners' cursors from before the restore ` +
        'answer 410 cursor_expired, and they resync',
    ],
  }
}

/**
 * On PostgreSQL, restoring is pg_restore's job: the answer is its command, given only for a dump
 * that holds nothing but rows and the schema its migrations make.
 */
async function checkedPostgresRestore(file: string, databaseUrl: string): Promise<CliError> {
  const described = await describePostgresDump(path.resolve(file), databaseUrl)
  if (described.refusal !== undefined || described.schema === undefined)
    return new CliError(`${described.refusal}; nothing was done`, [], 1, described.data)
  const keys = await signingKeysLost(path.resolve(file), described.schema, databaseUrl)
  return usePostgresTools(databaseUrl, file, 'restore', {
    ...described,
    ...(keys.length === 0
      ? {}
      : { keep: { keys, commands: keepSettingsCommands(databaseUrl, file, described.schema) } }),
  })
}

/** What the restore did with the replaced database's certificate signing keys. */
function signingKeyLines(keys: RestoreReport['signingKeys']): string[] {
  if (keys === undefined || ('written' in keys && keys.written === 0)) return []
  if ('notCarried' in keys)
    return [
      `the replaced database's certificate signing keys were not carried over: ${keys.notCarried}; certificates ` +
        'of deletion it signed with a key the backup lacks no longer verify against the published keys',
    ]
  return [
    "kept the replaced database's certificate signing keys: every certificate of deletion it issued still " +
      'verifies against the published keys',
  ]
}

/** Undone actions listed in the text at most; --json lists them all. */
const SHOWN_ACTIONS = 50

/** What the restore kept of the replaced database, what it undid, and what to make again. */
function historyLines(history: RestoreReport['history']): string[] {
  if (history === undefined) return []
  if ('notCarried' in history)
    return [
      `nothing was carried over from the replaced database: ${history.notCarried}; the disclosure and audit ` +
        'rows it wrote after the backup are not in the restored one',
    ]
  const { carried, undone, erased } = history
  const lines = [
    `kept from the replaced database: ${plural(carried.auditRows, 'audit row')} and ` +
      `${plural(carried.disclosureRows, 'disclosure row')} written after the backup`,
  ]
  if (undone.length > 0)
    lines.push(
      `${plural(undone.length, 'operator action')} recorded after the backup ${undone.length === 1 ? 'is' : 'are'} ` +
        'undone by the restore (their audit rows are kept); make again those that must stand (erasures, key ' +
        'revocations, suspensions, agreements ended):',
      ...undone.slice(0, SHOWN_ACTIONS).map((action) => `  ${action.at}  ${action.action}  ${action.target}`),
      ...(undone.length > SHOWN_ACTIONS ? [`  ... and ${undone.length - SHOWN_ACTIONS} more (--json lists all)`] : []),
    )
  if (erased.length > 0)
    lines.push(
      `${plural(erased.length, 'student')} erased after the backup ${erased.length === 1 ? 'is' : 'are'} back; ` +
        'erase them again with `curriculum students erase --file <a CSV with an id column> --yes`:',
      ...erased.map((id) => `  ${id}`),
    )
  return lines
}
