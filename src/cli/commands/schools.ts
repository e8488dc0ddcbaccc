/**
 * `curriculum schools ...`: the schools students attend. A school comes from a district's roster
 * or is added by hand; `schools members import` records who attends which school, and the
 * organisations a school is shared with follow (cases/school-attendance.ts): a student who joins is
 * linked to each of them, one who leaves is unlinked from those no other share keeps them in.
 */
import type { Command } from 'commander'
import { systemClock } from '../../clock.js'
import { UUID } from '../../domain/uuid.js'
import type { SchoolRow } from '../../storage/tables.js'
import { act } from '../command-action.js'
import { defineImportCommand } from '../import-command.js'
import { oneOf, text, uuid } from '../import-fields.js'
import type { MembershipRow } from '../../cases/csv-import.js'
import type { RecordImportSpec } from '../../imports/record-spec.js'
import type { PendingChange } from '../confirm.js'
import { leavingChange } from '../membership-ending.js'
import { defineCommand, defineGroup } from '../options.js'
import { table } from '../output.js'
import { withStorage } from '../storage-session.js'

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
  write: async (db, rows, now) => (await import('../../cases/csv-import.js')).importMemberships(db, rows, now),
  ending: {
    yes: 'record students leaving schools, ending the links that only those schools held,',
    preview: leavingChange,
  },
}

function schoolJson(row: SchoolRow) {
  return {
    id: row.id,
    name: row.name,
    identifier: row.identifier,
    externalId: row.external_id,
    createdAt: row.created_at,
  }
}

export function registerSchools(program: Command): void {
  const group = defineGroup(
    program,
    'schools',
    'The schools students attend: add one by hand, list them, record who attends which',
    'curriculum schools add --name "Hillside Primary" --identifier HP-01',
  )

  defineCommand(
    group,
    'add',
    'Add a school by hand (a roster import brings schools with it)',
    [
      'curriculum schools add --name "Hillside Primary"',
      'curriculum schools add --name "Oakwood High" --identifier OH --json',
    ],
    { audit: 'schools.add' },
  )
    .requiredOption('--name <name>', 'the school name, unique, 1 to 120 characters')
    .option('--identifier <code>', "the school's own code, shown beside its name")
    .action(
      act(async (command, audit) => {
        const { name, identifier } = command.opts<{ name: string; identifier?: string }>()
        const row = await audit.change(async ({ db }) => {
          const { createSchool } = await import('../../cases/schools.js')
          const row = await createSchool(db, { name, identifier: identifier ?? null }, systemClock.now())
          return { value: row, target: `school:${row.id}`, changed: { name: row.name, identifier: row.identifier } }
        })
        return { data: { school: schoolJson(row) }, text: `added school ${row.name} (${row.id})` }
      }),
    )

  defineCommand(group, 'list', 'List the schools, with how many students attend each and its shares in force', [
    'curriculum schools list',
    'curriculum schools list --json',
  ]).action(
    act(async () => {
      const schools = await withStorage(async ({ storage }) =>
        (await import('../../storage/school-repository.js')).listSchools(storage.db),
      )
      return {
        data: { schools },
        text:
          schools.length === 0
            ? 'no schools'
            : table(
                ['ID', 'NAME', 'IDENTIFIER', 'EXTERNAL ID', 'SOURCE', 'STUDENTS', 'SHARES'],
                schools.map((s) => [
                  s.id,
                  s.name,
                  s.identifier,
                  s.externalId,
                  s.source,
                  String(s.students),
                  String(s.shares),
                ]),
              ),
      }
    }),
  )

  const members = defineGroup(
    group,
    'members',
    'Record which students attend which school',
    'curriculum schools members import members.csv',
  )
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
