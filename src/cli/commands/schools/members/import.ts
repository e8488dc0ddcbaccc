/**
 * `curriculum schools members import <file>`: students joining and leaving schools, all or
 * nothing (cases/csv-import.ts); a file with leavers shows what it would end and asks first.
 */
import type { Command } from 'commander'
import { UUID } from '../../../../domain/uuid.js'
import type { MembershipRow } from '../../../../cases/csv-import.js'
import type { RecordImportSpec } from '../../../../imports/record-spec.js'
import type { SchoolRow } from '../../../../storage/tables.js'
import type { PendingChange } from '../../../confirm.js'
import { defineImportCommand } from '../../../import-command.js'
import { oneOf, text, uuid } from '../../../import-fields.js'
import { leavingChange } from './membership-ending.js'

interface Schools {
  byId: Map<string, SchoolRow>
  byExternalId: Map<string, SchoolRow>
  byName: Map<string, SchoolRow[]>
}

const STATUSES = ['attends', 'left'] as const

export const membershipImport: RecordImportSpec<MembershipRow, Schools, PendingChange> = {
  noun: 'membership',
  audit: { action: 'schools.members.import', target: 'schools' },
  fields: ['studentId', 'school', 'status'],
  optional: ['status'],
  unknownField: 'only studentId, school and status are accepted',
  async prepare(db) {
    const rows = await db.selectFrom('schools').selectAll().execute()
    const byName = new Map<string, SchoolRow[]>()
    for (const row of rows) byName.set(row.name, [...(byName.get(row.name) ?? []), row])
    return {
      byId: new Map(rows.map((row) => [row.id, row])),
      byExternalId: new Map(rows.filter((row) => row.external_id !== null).map((row) => [row.external_id!, row])),
      byName,
    }
  },
  parse(row, schools) {
    const studentId = uuid(row, 'studentId')
    const given = text(row, 'school')
    const statusValue = row.value('status')
    // Absent or empty: the student attends the school.
    const status =
      statusValue === undefined || statusValue === null || statusValue === ''
        ? 'attends'
        : oneOf(row, 'status', STATUSES)
    let school: SchoolRow | undefined
    if (given !== null) {
      // The same order as findSchool: id, external id, exact name.
      const ref = given.trim()
      const named = schools.byName.get(ref) ?? []
      school =
        (UUID.test(ref) ? schools.byId.get(ref.toLowerCase()) : undefined) ??
        schools.byExternalId.get(ref) ??
        (named.length === 1 ? named[0] : undefined)
      if (school === undefined)
        row.report(
          'school',
          named.length > 1
            ? `several schools are named "${ref}"; name the school by its id (curriculum schools list)`
            : `no school "${ref}"; see curriculum schools list, or add it: curriculum schools add --name <name>`,
        )
    }
    if (studentId === null || school === undefined || status === null) return null
    return { studentId, schoolId: school.id, left: status === 'left' }
  },
  key: (row) => `${row.studentId} ${row.schoolId}`,
  duplicate: (row, firstLine) => ({
    field: 'school',
    message: `student ${row.studentId} is listed with this school already on line ${firstLine}`,
  }),
  student: { field: 'studentId', of: (row) => row.studentId, mustExist: true },
  write: async (db, rows, now) => (await import('../../../../cases/csv-import.js')).importMemberships(db, rows, now),
  ending: {
    yes: 'record students leaving schools, ending the links that only those schools held,',
    preview: leavingChange,
  },
}

export function defineMembersImport(members: Command): void {
  defineImportCommand(
    members,
    membershipImport,
    'Record students attending (or, with status left, leaving) schools from a CSV or JSON Lines file, all or ' +
      'nothing; the organisations each school is shared with follow. A file with students leaving shows what ' +
      'it would end and asks first.',
    [
      'curriculum schools members import members.csv      # header: studentId,school[,status]',
      'curriculum schools members import leavers.csv --dry-run     # what the left rows would end',
      'curriculum schools members import leavers.jsonl --yes --json',
    ],
  )
}
