/**
 * `curriculum students import`: students by id, first name and tier. First names only: the
 * service must not hold more about a child than it needs, so any other field (a surname, an
 * e-mail address, a birth date) fails the import instead of being dropped silently.
 * `curriculum students erase`: one student, or every student of a file (student-erasure.ts), each
 * with what it would erase shown first and asked about (confirm.ts).
 */
import { type Command, Option } from 'commander'
import type { Kysely } from 'kysely'
import { systemClock } from '../../clock.js'
import { NotFoundError } from '../../domain/errors.js'
import { firstNameProblem } from '../../domain/first-name.js'
import { TIER_IDS } from '../../domain/tiers.js'
import { UUID } from '../../domain/uuid.js'
import type { StudentImportRow } from '../../storage/student-import-repository.js'
import type { Database } from '../../storage/tables.js'
import type { ErasurePreview, StudentToErase } from '../../storage/erasure-preview-repository.js'
import { act } from '../command-action.js'
import { confirmChange, type PendingChange, withConfirmation } from '../confirm.js'
import { defineImportCommand } from '../import-command.js'
import { oneOf, text, uuid } from '../import-fields.js'
import type { RecordImportSpec } from '../../imports/record-spec.js'
import { defineCommand, defineGroup } from '../options.js'
import { plural, table, UsageError } from '../output.js'
import { RECORD_FORMATS, type RecordFormat } from '../../imports/records.js'
import { formatOf } from '../record-format.js'
import { eraseInBatches, readErasureFile } from '../student-erasure.js'
import { withStorage } from '../storage-session.js'

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
    (await import('../../cases/csv-import.js')).importStudents(db, rows, now, progress),
}

export function registerStudents(program: Command): void {
  const group = defineGroup(
    program,
    'students',
    'Import students (id, first name, tier), or erase them',
    'curriculum students import students.csv',
  )
  defineImportCommand(group, studentImport, 'Add or update students from a CSV or JSON Lines file, all or nothing', [
    'curriculum students import students.csv      # header: id,firstName,tier',
    'curriculum students import students.jsonl --json',
  ])
  registerErase(group)
}

interface EraseOptions {
  file?: string
  format?: RecordFormat
}

function registerErase(group: Command): void {
  const command = defineCommand(
    group,
    'erase [id]',
    'Erase a student, or every student listed in a file: first name, progress, links and change history, for ' +
      'good; each organisation it was linked to is told (student_deleted). Shows, per student, the links, ' +
      'progress entries and change-log rows it would erase, then asks (or, without a terminal, erases only ' +
      'with --yes). Sandbox students are refused.',
    [
      'curriculum students erase 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42          # shows what it would erase, asks',
      'curriculum students erase 0b6d9a3e-3f1c-4d57-9a0e-2a7c5c1e8f42 --yes',
      'curriculum students erase --file leaving.csv --dry-run     # header: id',
      'curriculum students erase --file leaving.csv --yes --json',
    ],
    { audit: 'students.erase' },
  )
    .option('--file <file>', 'erase every student of this file: CSV with an id column, or JSON Lines {"id": ...}')
    .addOption(
      new Option('--format <format>', 'format of --file; by default taken from its extension').choices(RECORD_FORMATS),
    )
  withConfirmation(command, 'erase (it cannot be undone)')
  command.action(
    act(async (command, audit) => {
      const [id] = command.processedArgs as [string | undefined]
      const options = command.opts<EraseOptions>()
      if ((id === undefined) === (options.file === undefined))
        throw new UsageError('name one student id, or a file of them with --file')
      if (id !== undefined && !UUID.test(id))
        throw new UsageError(
          `"${id}" is not a student id; expected a UUID such as 11111111-1111-4111-8111-111111111111`,
        )
      const ids =
        id !== undefined
          ? [id.toLowerCase()]
          : await readErasureFile(options.file!, formatOf(options.file!, options.format))
      const subject = id === undefined ? { file: options.file } : { studentId: ids[0] }
      const preview = await withStorage(async ({ storage }) => erasing(storage.db, ids))
      // Without --yes and without a terminal this is the preview the command has always promised: exit 0.
      const confirmed = await confirmChange(command, erasureChange(subject, preview), true)
      if (!confirmed.write) return confirmed.result
      const started = performance.now()
      const { totals, log } = await withStorage(async ({ storage }) => {
        const totals = await eraseInBatches(storage, ids, {
          now: systemClock.now(),
          record: (db, student) =>
            audit.record(db, `student:${student.id}`, {
              organisations: student.organisations,
              progress: student.progress,
            }),
        })
        return { totals, log: await storage.truncateLog() }
      })
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
      return {
        data: { ...subject, ...totals, log, seconds },
        text: [
          `erased ${plural(totals.erased, 'student')} in ${seconds} s: ` +
            `${plural(totals.progress, 'progress entry', 'progress entries')}, ` +
            `${plural(totals.links, 'link')} (each organisation told), ` +
            `${plural(totals.webhooks, 'webhook delivery', 'webhook deliveries')} queued`,
          ...(totals.missing.length === 0
            ? []
            : [`${plural(totals.missing.length, 'id')} had no student (never stored, or erased already)`]),
          ...(log === 'busy'
            ? ['the SQLite WAL file was busy and is not truncated yet: it empties when the server next closes it']
            : []),
        ],
      }
    }),
  )
}

/**
 * What erasing `ids` would remove; refuses, as the erasure would, an id list naming a sandbox
 * student, and a single id no student has.
 */
async function erasing(db: Kysely<Database>, ids: readonly string[]): Promise<ErasurePreview> {
  const [{ erasurePreview }, { SandboxStudentError }] = await Promise.all([
    import('../../storage/erasure-preview-repository.js'),
    import('../../cases/erasure.js'),
  ])
  const preview = await erasurePreview(db, ids)
  if (ids.length === 1 && preview.missing.length === 1)
    throw new NotFoundError(`no student ${ids[0]} (never stored, or erased already)`)
  const sandbox = preview.students.filter((student) => student.sandbox).map((student) => student.id)
  if (sandbox.length > 0) throw new SandboxStudentError(sandbox)
  return preview
}

/** The preview of an erasure: per student, what goes and who is told. */
function erasureChange(subject: Record<string, unknown>, preview: ErasurePreview): PendingChange {
  const { students, missing } = preview
  const sum = (of: (student: StudentToErase) => number) => students.reduce((total, student) => total + of(student), 0)
  const lines =
    students.length === 0
      ? ['no student to erase']
      : [
          `would erase ${plural(students.length, 'student')} for good (first name, progress, links, change history); ` +
            'each organisation linked is told (student_deleted):',
          ...table(
            ['STUDENT', 'LINKS', 'PROGRESS', 'CHANGES', 'LINKED TO'],
            students.map((student) => [
              student.id,
              String(student.organisations.length),
              String(student.progress),
              String(student.changes),
              student.organisations.map((o) => `${o.name} (${o.id})`).join(', ') || 'no organisation',
            ]),
          ),
          `in all: ${plural(
            sum((s) => s.organisations.length),
            'link',
          )}, ` +
            `${plural(
              sum((s) => s.progress),
              'progress entry',
              'progress entries',
            )}, ` +
            `${plural(
              sum((s) => s.changes),
              'change-log row',
            )}`,
        ]
  if (missing.length > 0)
    lines.push(`${plural(missing.length, 'id')} of no student (never stored, or erased already): ${missing.join(', ')}`)
  return {
    lines,
    data: { ...subject, preview: { students: students.map(({ sandbox: _, ...student }) => student), missing } },
    ends: students.length > 0,
    action: `erase ${plural(students.length, 'student')}`,
  }
}
