/**
 * `curriculum students import <file>`: students by id, first name and tier. First names only: the
 * service must not hold more about a child than it needs, so any other field (a surname, an
 * e-mail address, a birth date) fails the import instead of being dropped silently.
 */
import type { Command } from 'commander'
import { firstNameProblem } from '../../../domain/first-name.js'
import { TIER_IDS } from '../../../domain/tiers.js'
import type { RecordImportSpec } from '../../../imports/record-spec.js'
import type { StudentImportRow } from '../../../storage/student-import-repository.js'
import { defineImportCommand } from '../../import-command.js'
import { oneOf, text, uuid } from '../../import-fields.js'

export const studentImport: RecordImportSpec<StudentImportRow, void> = {
  noun: 'student',
  audit: { action: 'students.import', target: 'students' },
  fields: ['id', 'firstName', 'tier'],
  unknownField: 'only id, firstName and tier are accepted: student records hold first names only',
  prepare: async () => {},
  parse(row) {
    const id = uuid(row, 'id')
    const name = text(row, 'firstName')
    const problem = name === null ? null : firstNameProblem(name)
    if (problem !== null) row.report('firstName', problem)
    const tier = oneOf(row, 'tier', TIER_IDS)
    if (id === null || name === null || problem !== null || tier === null) return null
    return { id, firstName: name.normalize('NFC'), tier }
  },
  // Not required to exist (the import adds students), but never a sandbox student.
  student: { field: 'id', of: (row) => row.id, mustExist: false },
  key: (row) => row.id,
  duplicate: (row, firstLine) => ({ field: 'id', message: `student ${row.id} is already on line ${firstLine}` }),
  write: async (db, rows, now, progress) =>
    (await import('../../../cases/csv-import.js')).importStudents(db, rows, now, progress),
}

export function defineStudentsImport(students: Command): void {
  defineImportCommand(students, studentImport, 'Add or update students from a CSV or JSON Lines file, all or nothing', [
    'curriculum students import students.csv      # header: id,firstName,tier',
    'curriculum students import students.jsonl --json',
  ])
}
