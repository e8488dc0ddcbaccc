/** `curriculum migrate`: bring the schema up to date, for deploy scripts that want it as a step. */
import type { Command } from 'commander'
import { act } from '../command-action.js'
import { defineCommand } from '../options.js'
import { withStorage } from '../storage-session.js'

export function registerMigrate(program: Command): void {
  defineCommand(program, 'migrate', 'Apply pending database migrations (every command also does this first)', [
    'DATABASE_URL=sqlite:data/curriculum.db curriculum migrate',
  ]).action(
    act(async () => {
      const { applied } = await withStorage(async ({ migrated }) => migrated)
      return {
        data: { applied },
        text: applied.length === 0 ? 'the database is up to date' : applied.map((name) => `applied ${name}`),
      }
    }),
  )
}
