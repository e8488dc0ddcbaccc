/** The lesson files both catalog commands read: the folder named, or CATALOG_DIR; every problem fails. */
import type { Command } from 'commander'
import { loadConfig } from '../../../config.js'
import { CliError, plural } from '../../output.js'

export async function readOrFail(dir: string, consequence: string) {
  const { readCatalogDir } = await import('../../../catalog/catalog-files.js')
  const result = readCatalogDir(dir)
  if (!result.ok) {
    // Printed as `file:line: message` (the form of formatProblem), file relative to the catalog folder.
    throw new CliError(`${dir}: ${plural(result.problems.length, 'problem')}${consequence}`, result.problems)
  }
  return result.catalog
}

export function directory(command: Command): string {
  const [dir] = command.processedArgs as [string | undefined]
  return dir ?? loadConfig().catalogDir
}
