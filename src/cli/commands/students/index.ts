/** `curriculum students ...`: students imported by id, first name and tier, or erased. */
import type { Command } from 'commander'
import { defineGroup } from '../../options.js'
import { defineStudentsErase } from './erase.js'
import { defineStudentsImport } from './import.js'

export function defineStudents(program: Command): void {
  const students = defineGroup(
    program,
    'students',
    'Import students (id, first name, tier), or erase them',
    'curriculum students import students.csv',
  )
  defineStudentsImport(students)
  defineStudentsErase(students)
}
