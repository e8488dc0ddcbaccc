/**
 * What `curriculum students erase` would remove, shown before it asks: per student, the links,
 * progress and change-log rows that go, and who is told.
 */
import type { Kysely } from 'kysely'
import { NotFoundError } from '../../../domain/errors.js'
import type { ErasurePreview, StudentToErase } from '../../../storage/erasure-preview-repository.js'
import type { Database } from '../../../storage/tables.js'
import type { PendingChange } from '../../confirm.js'
import { plural, table } from '../../output.js'

/**
 * What erasing `ids` would remove; refuses, as the erasure would, an id list naming a sandbox
 * student, and a single id no student has.
 */
export async function erasing(db: Kysely<Database>, ids: readonly string[]): Promise<ErasurePreview> {
  const [{ erasurePreview }, { SandboxStudentError }] = await Promise.all([
    import('../../../storage/erasure-preview-repository.js'),
    import('../../../cases/erasure.js'),
  ])
  const preview = await erasurePreview(db, ids)
  if (ids.length === 1 && preview.missing.length === 1)
    throw new NotFoundError(`no student ${ids[0]} (never stored, or erased already)`)
  const sandbox = preview.students.filter((student) => student.sandbox).map((student) => student.id)
  if (sandbox.length > 0) throw new SandboxStudentError(sandbox)
  return preview
}

/** The preview of an erasure: per student, what goes and who is told. */
export function erasureChange(subject: Record<string, unknown>, preview: ErasurePreview): PendingChange {
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
