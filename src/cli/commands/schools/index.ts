/**
 * `curriculum schools ...`: the schools students attend. A school comes from a district's roster
 * or is added by hand; `schools members import` records who attends which school, and the
 * organisations a school is shared with follow (cases/school-attendance.ts): a student who joins is
 * linked to each of them, one who leaves is unlinked from those no other share keeps them in.
 */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineSchoolsAdd } from './add.js'
import { defineSchoolsList } from './list.js'
import { defineSchoolsMembers } from './members/index.js'

export function defineSchools(program: Command): void {
  const schools = defineGroup(
    program,
    'schools',
    'The schools students attend: add one by hand, list them, record who attends which',
    'curriculum schools add --name "Hillside Primary" --identifier HP-01',
  )
  defineSchoolsAdd(schools)
  defineSchoolsList(schools)
  defineSchoolsMembers(schools)
}
