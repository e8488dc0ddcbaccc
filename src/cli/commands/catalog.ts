/**
 * `curriculum catalog validate|import`: check the lesson files, and replace the stored catalog
 * with them. Import checks everything first and replaces the catalog in one transaction, so a
 * broken file never reaches partners and a failed import leaves the old catalog in place.
 */
import type { Command } from 'commander'
import { systemClock } from '../../clock.js'
import { loadConfig } from '../../config.js'
import { act } from '../command-action.js'
import { defineCommand, defineGroup } from '../options.js'
import { CliError, plural } from '../output.js'

async function readOrFail(dir: string, consequence: string) {
  const { readCatalogDir } = await import('../../catalog/catalog-files.js')
  const result = readCatalogDir(dir)
  if (!result.ok) {
    // Printed as `file:line: message` (the form of formatProblem), file relative to the catalog folder.
    throw new CliError(`${dir}: ${plural(result.problems.length, 'problem')}${consequence}`, result.problems)
  }
  return result.catalog
}

function directory(command: Command): string {
  const [dir] = command.processedArgs as [string | undefined]
  return dir ?? loadConfig().catalogDir
}

export function registerCatalog(program: Command): void {
  const catalog = defineGroup(
    program,
    'catalog',
    'Check and import the lesson catalog',
    'curriculum catalog validate catalog/',
  )

  defineCommand(
    catalog,
    'validate [dir]',
    'Check the catalog files and report every problem with its file and line; writes nothing',
    [
      'curriculum catalog validate            # CATALOG_DIR, default ./catalog',
      'curriculum catalog validate ./catalog --json',
    ],
  ).action(
    act(async (command) => {
      const dir = directory(command)
      const data = await readOrFail(dir, '')
      return {
        data: { dir, tiers: data.tiers.length, lessons: data.lessons.length },
        text: `${dir}: valid (${plural(data.tiers.length, 'tier')}, ${plural(data.lessons.length, 'lesson')})`,
      }
    }),
  )

  defineCommand(
    catalog,
    'import [dir]',
    'Replace the stored catalog with the files, all at once, after checking every file',
    [
      'curriculum catalog import              # CATALOG_DIR, default ./catalog',
      'curriculum catalog import ./catalog --json',
    ],
    { audit: 'catalog.import' },
  ).action(
    act(async (command, audit) => {
      const dir = directory(command)
      const data = await readOrFail(dir, '; the stored catalog was not changed')
      // Subscribed endpoints hear of the new catalog if, and only if, it was stored.
      const version = await audit.change(async ({ db }) => {
        const { publishCatalog } = await import('../../cases/catalog-publishing.js')
        const summary = await publishCatalog(db, data, systemClock)
        return { value: summary.catalogVersion, target: 'catalog', changed: { dir, ...summary } }
      })
      return {
        data: { dir, tiers: data.tiers.length, lessons: data.lessons.length, catalogVersion: version },
        text:
          `imported ${plural(data.tiers.length, 'tier')} and ${plural(data.lessons.length, 'lesson')} ` +
          `from ${dir}; catalog version ${version}`,
      }
    }),
  )
}
