/** `curriculum catalog validate [dir]`: every problem of the lesson files, with its file and line; writes nothing. */
import type { Command } from 'commander'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, plural } from '../../output.js'
import { directory, readOrFail } from './catalog-dir.js'

export function defineCatalogValidate(catalog: Command): void {
  defineCommand(
    catalog,
    'validate [dir]',
    'Check the catalog files and report every problem with its file and line; writes nothing',
    [
      'curriculum catalog validate            # CATALOG_DIR, default ./catalog',
      'curriculum catalog validate ./catalog --json',
    ],
  ).action(act(validate))
}

async function validate(command: Command): Promise<CommandResult> {
  const dir = directory(command)
  const data = await readOrFail(dir, '')
  return {
    data: { dir, tiers: data.tiers.length, lessons: data.lessons.length },
    text: `${dir}: valid (${plural(data.tiers.length, 'tier')}, ${plural(data.lessons.length, 'lesson')})`,
  }
}
