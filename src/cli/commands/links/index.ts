/**
 * `curriculum links ...`: which organisation may see which student. A partner reaches a
 * student's data only through a link, and every link to a partner is held by a share: a school
 * (its students present and future) or a list (`links add`, or a `links import` file, one list
 * share per organisation and file). `links remove` ends a school's share or unlinks one student,
 * and the organisation is told (change feed and webhook) to drop its copy.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineLinksAdd } from './add.js'
import { defineLinksImport } from './import.js'
import { defineLinksRemove } from './remove.js'
import { defineLinksShares } from './shares.js'

export function defineLinks(program: Command): void {
  const links = defineGroup(
    program,
    'links',
    'Share students with the organisations that may see them (by school or by list), or unlink them',
    'curriculum links add --org "Acme Learning" --school "Hillside Primary"',
  )
  defineLinksImport(links)
  defineLinksAdd(links)
  defineLinksShares(links)
  defineLinksRemove(links)
}
