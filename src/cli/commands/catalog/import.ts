/** `curriculum catalog import [dir]`: the lesson files replace the stored catalog, all at once, once all are sound. */
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, plural } from '../../output.js'
import { directory, readOrFail } from './catalog-dir.js'

export function defineCatalogImport(catalog: Command): void {
  defineCommand(
    catalog,
    'import [dir]',
    'Replace the stored catalog with the files, all at once, after checking every file',
    [
      'curriculum catalog import              # CATALOG_DIR, default ./catalog',
      'curriculum catalog import ./catalog --json',
    ],
    { audit: 'catalog.import' },
  ).action(act(importCatalog))
}

async function importCatalog(command: Command, audit: Audit): Promise<CommandResult> {
  const dir = directory(command)
  const data = await readOrFail(dir, '; the stored catalog was not changed')
  // Subscribed endpoints hear of the new catalog if, and only if, it was stored.
  const version = await audit.change(async ({ db }) => {
    const { publishCatalog } = await import('../../../cases/catalog-publishing.js')
    const summary = await publishCatalog(db, data, systemClock)
    return { value: summary.catalogVersion, target: 'catalog', changed: { dir, ...summary } }
  })
  return {
    data: { dir, tiers: data.tiers.length, lessons: data.lessons.length, catalogVersion: version },
    text:
      `imported ${plural(data.tiers.length, 'tier')} and ${plural(data.lessons.length, 'lesson')} ` +
      `from ${dir}; catalog version ${version}`,
  }
}
