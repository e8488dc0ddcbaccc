/** `curriculum migrate`: bring the schema up to date, for deploy scripts that want it as a step. */
import type { Command } from 'commander'
import { act } from '../command-action.js'
import { defineCommand } from '../options.js'

export function registerMigrate(program: Command): void {
  defineCommand(
    program,
    'migrate',
    'Apply pending database migrations (every command also does this first)',
    ['DATABASE_URL=sqlite:data/curriculum.db curriculum migrate'],
    { audit: 'database.migrate' },
  ).action(
    act(async (_command, audit) => {
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
    }),
  )
}
