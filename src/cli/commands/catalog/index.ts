/**
 * `curriculum catalog validate|import|case-import`: check the lesson files, and replace the stored
 * catalog with them. Import checks everything first and replaces the catalog in one transaction, so
 * a broken file never reaches partners and a failed import leaves the old catalog in place.
 * case-import writes a framework's CASE map into the catalog folder, for the next import.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineCatalogCaseImport } from './case-import.js'
import { defineCatalogImport } from './import.js'
import { defineCatalogValidate } from './validate.js'

export function defineCatalog(program: Command): void {
  const catalog = defineGroup(
    program,
    'catalog',
    'Check and import the lesson catalog',
    'curriculum catalog validate catalog/',
  )
  defineCatalogValidate(catalog)
  defineCatalogImport(catalog)
  defineCatalogCaseImport(catalog)
}
