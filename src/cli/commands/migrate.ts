/**
 * `curriculum migrate`: bring the schema up to date, for deploy scripts that want it as a step;
 * with --dry-run, only say which migrations that would apply.
 */
import fs from 'node:fs'
import type { Command } from 'commander'
import type { Audit } from '../audit.js'
import { act } from '../command-action.js'
import { defineCommand } from '../options.js'
import type { CommandResult } from '../output.js'
import { withStorage } from '../storage-session.js'

export function defineMigrate(program: Command): void {
  defineCommand(
    program,
    'migrate',
    'Apply pending database migrations (every command also does this first); --dry-run lists them',
    [
      'DATABASE_URL=sqlite:data/curriculum.db curriculum migrate --dry-run',
      'DATABASE_URL=sqlite:data/curriculum.db curriculum migrate',
    ],
    { audit: 'database.migrate' },
  )
    .option('--dry-run', 'list the migrations that would be applied, and change nothing')
    .action(act(migrate))
}

async function migrate(command: Command, audit: Audit): Promise<CommandResult> {
  if (command.opts<{ dryRun?: boolean }>().dryRun === true) return dryRun()
  // Recorded even when there was nothing to apply: a deploy that ran it is worth knowing.
  const applied = await audit.change(async ({ migrated }) => ({
    value: migrated.applied,
    target: 'database',
    changed: { applied: migrated.applied },
  }))
  return {
    data: { applied },
    text: applied.length === 0 ? 'the database is up to date' : applied.map((name) => `applied ${name}`),
  }
}

/** Reads the migration table and writes nothing, not even an audit row: nothing was done. */
async function dryRun(): Promise<CommandResult> {
  const { loadConfig } = await import('../../config.js')
  const { engineOf, sqliteFile } = await import('../../storage/connection.js')
  const { compareMigrations, migrationState, NewerDatabaseError } = await import('../../storage/migrate.js')
  const { databaseUrl } = loadConfig()
  const file = engineOf(databaseUrl) === 'sqlite' ? sqliteFile(databaseUrl) : undefined
  // Opening a SQLite file that is not there would create it.
  const state =
    file !== undefined && file !== ':memory:' && !fs.existsSync(file)
      ? compareMigrations([])
      : await withStorage(({ storage }) => migrationState(storage), { migrate: false })
  if (state.unknown.length > 0) throw new NewerDatabaseError(state.unknown)
  return {
    data: { dryRun: true, pending: state.pending, applied: state.applied },
    text:
      state.pending.length === 0
        ? `the database is up to date (${state.applied.length} migrations applied); nothing would change`
        : [
            `${state.pending.length} pending ${state.pending.length === 1 ? 'migration' : 'migrations'} ` +
              '(nothing was changed; `curriculum migrate` applies them):',
            ...state.pending.map((name) => `  ${name}`),
          ],
  }
}
