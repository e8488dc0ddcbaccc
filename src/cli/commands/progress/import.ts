/**
 * `curriculum progress import`: lesson progress brought over from another system. A row must
 * name a lesson of the stored catalog, or the partner would be served progress in a lesson that
 * does not exist; --allow-unknown-lessons lets them in while a catalog is being replaced. Stored
 * progress outlives lessons a later catalog drops: only the import checks.
 */
import type { Command } from 'commander'
import { PROGRESS_STATUSES } from '../../../domain/progress.js'
import type { ProgressImportRow } from '../../../storage/student-import-repository.js'
import { defineImportCommand } from '../../import-command.js'
import { count, oneOf, optionalTimestamp, text, timestamp, uuid } from '../../import-fields.js'
import type { RecordImportSpec } from '../../../imports/record-spec.js'

interface Lessons {
  slug: RegExp
  /** The stored catalog's lessons; null with --allow-unknown-lessons. */
  known: ReadonlySet<string> | null
}

export const progressImport: RecordImportSpec<ProgressImportRow, Lessons> = {
  noun: 'progress row',
  audit: { action: 'progress.import', target: 'progress' },
  options: [
    {
      flags: '--allow-unknown-lessons',
      description: 'accept lessons the stored catalog does not have, e.g. while a catalog is being replaced',
    },
  ],
  fields: ['studentId', 'lessonSlug', 'status', 'xp', 'timeSeconds', 'startedAt', 'completedAt'],
  optional: ['completedAt'],
  unknownField: 'only studentId, lessonSlug, status, xp, timeSeconds, startedAt and completedAt are accepted',
  prepare: async (db, options) => ({
    slug: (await import('../../../catalog/catalog-files.js')).SLUG,
    known:
      options.allowUnknownLessons === true
        ? null
        : await (await import('../../../storage/catalog-repository.js')).lessonSlugs(db),
  }),
  parse(row, { slug, known }) {
    const studentId = uuid(row, 'studentId')
    let lessonSlug = text(row, 'lessonSlug')
    if (lessonSlug !== null && !slug.test(lessonSlug)) {
      row.report(
        'lessonSlug',
        `must be <tier>/<lessonId>-<title-words>, such as explorer/e1-robots-follow-instructions (got "${lessonSlug}")`,
      )
      lessonSlug = null
    } else if (lessonSlug !== null && known !== null && !known.has(lessonSlug)) {
      row.report(
        'lessonSlug',
        `the stored catalog has no lesson "${lessonSlug}"; import the catalog that has it first ` +
          '(curriculum catalog import), or pass --allow-unknown-lessons while one is being replaced',
      )
      lessonSlug = null
    }
    const status = oneOf(row, 'status', PROGRESS_STATUSES)
    const xp = count(row, 'xp')
    const timeSeconds = count(row, 'timeSeconds')
    const startedAt = timestamp(row, 'startedAt')
    const completedAt = optionalTimestamp(row, 'completedAt')
    let completedOk = completedAt !== null
    if (status === 'completed' && completedAt === undefined) {
      row.report('completedAt', 'is required when status is completed')
      completedOk = false
    } else if (status === 'in_progress' && completedAt !== undefined) {
      row.report('completedAt', 'must be empty when status is in_progress')
      completedOk = false
    } else if (typeof completedAt === 'string' && startedAt !== null && completedAt < startedAt) {
      // Both are ISO UTC with milliseconds, so text order is time order.
      row.report('completedAt', `must not be before startedAt (${startedAt})`)
      completedOk = false
    }
    if (
      studentId === null ||
      lessonSlug === null ||
      status === null ||
      xp === null ||
      timeSeconds === null ||
      startedAt === null ||
      !completedOk
    )
      return null
    return { studentId, lessonSlug, status, xp, timeSeconds, startedAt, completedAt: completedAt ?? null }
  },
  key: (row) => `${row.studentId} ${row.lessonSlug}`,
  duplicate: (row, firstLine) => ({
    field: 'lessonSlug',
    message: `student ${row.studentId} already has a row for ${row.lessonSlug} on line ${firstLine}`,
  }),
  student: { field: 'studentId', of: (row) => row.studentId, mustExist: true },
  write: async (db, rows, now, progress) =>
    (await import('../../../cases/csv-import.js')).importProgress(db, rows, now, progress),
}

export function defineProgressImport(progress: Command): void {
  defineImportCommand(
    progress,
    progressImport,
    'Add or replace lesson progress from a CSV or JSON Lines file, all or nothing',
    [
      'curriculum progress import progress.csv   # header: ' +
        'studentId,lessonSlug,status,xp,timeSeconds,startedAt,completedAt',
    ],
  )
}
