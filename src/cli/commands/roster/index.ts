/** `curriculum roster ...`: a district's OneRoster export, students and schools only. */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineRosterImport } from './import.js'

export function defineRoster(program: Command): void {
  const roster = defineGroup(
    program,
    'roster',
    "Import a district's roster: a OneRoster 1.1 or 1.2 CSV export (folder or .zip), students and schools only",
    'curriculum roster import export.zip --dry-run',
  )
  defineRosterImport(roster)
}
