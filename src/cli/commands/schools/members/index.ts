/** `curriculum schools members ...`: which students attend which school. */
import type { Command } from 'commander'
import { defineGroup } from '../../../options.js'
import { defineMembersImport } from './import.js'

export function defineSchoolsMembers(schools: Command): void {
  const members = defineGroup(
    schools,
    'members',
    'Record which students attend which school',
    'curriculum schools members import members.csv',
  )
  defineMembersImport(members)
}
