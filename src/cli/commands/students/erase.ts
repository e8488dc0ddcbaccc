/**
 * `curriculum students erase`: one student, or every student of a file (student-erasure.ts), each
 * with what it would erase shown first and asked about (confirm.ts).
 */
import { type Command, Option } from 'commander'
import { systemClock } from '../../../clock.js'
import { UUID } from '../../../domain/uuid.js'
import { RECORD_FORMATS, type RecordFormat } from '../../../imports/records.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { confirmChange, withConfirmation } from '../../confirm.js'
import { defineCommand } from '../../options.js'
import { type CommandResult, plural, UsageError } from '../../output.js'
import { formatOf } from '../../record-format.js'
import { withStorage } from '../../storage-session.js'
import { erasing, erasureChange } from './erase-preview.js'
import { eraseInBatches, readErasureFile } from './student-erasure.js'

interface EraseOptions {
  file?: string
  format?: RecordFormat
}

export function defineStudentsErase(students: Command): void {
  const command = defineCommand(
    students,
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
  command.action(act(eraseStudents))
}

async function eraseStudents(command: Command, audit: Audit): Promise<CommandResult> {
  const [id] = command.processedArgs as [string | undefined]
  const options = command.opts<EraseOptions>()
  if ((id === undefined) === (options.file === undefined))
    throw new UsageError('name one student id, or a file of them with --file')
  if (id !== undefined && !UUID.test(id))
    throw new UsageError(`"${id}" is not a student id; expected a UUID such as 11111111-1111-4111-8111-111111111111`)
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
}
