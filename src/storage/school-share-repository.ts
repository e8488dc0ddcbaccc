/**
 * The rows of who attends which school and of the shares that follow them (migration 0012): the
 * queries of cases/school-attendance.ts, and the ending of links no share holds any more, which
 * every change that takes students out of shares ends with.
 *
 * A link (`student_organisations`) to a partner organisation exists exactly while some share of
 * that organisation holds the student (`share_students`); an unlinked student's organisation is
 * told with a `student_unlinked` notice and webhook. Callers run these inside their own
 * transaction, with the other writes of the same change first: the notices are numbered last
 * (student-change-log.ts).
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import { recordStudentChanges } from './student-change-log.js'
import type { Database } from './tables.js'
import { announceStudentNotices } from './webhook-repository.js'
import { chunks } from './statement-chunks.js'

type Db = Kysely<Database>

export interface Attendance {
  studentId: string
  schoolId: string
}

export interface Link {
  studentId: string
  organisationId: string
}

/** Records that `row`'s student no longer attends its school. */
export async function leaveSchool(trx: Db, row: Attendance): Promise<void> {
  await trx
    .deleteFrom('student_schools')
    .where('student_id', '=', row.studentId)
    .where('school_id', '=', row.schoolId)
    .execute()
}

/** Takes the student out of the share; true when the share held them. */
export async function removeFromShare(trx: Db, shareId: string, studentId: string): Promise<boolean> {
  const removed = await trx
    .deleteFrom('share_students')
    .where('share_id', '=', shareId)
    .where('student_id', '=', studentId)
    .executeTakeFirst()
  return Number(removed.numDeletedRows) > 0
}

/** Records that each of `rows` attends its school; returns the pairs not recorded before. */
export async function recordAttendance(trx: Db, rows: readonly Attendance[], at: string): Promise<Attendance[]> {
  const made = await trx
    .insertInto('student_schools')
    .values(rows.map((row) => ({ student_id: row.studentId, school_id: row.schoolId, created_at: at })))
    .onConflict((oc) => oc.columns(['student_id', 'school_id']).doNothing())
    .returning(['student_id', 'school_id'])
    .execute()
  return made.map((row) => ({ studentId: row.student_id, schoolId: row.school_id }))
}

/**
 * Ends the links among `links` that no share of their organisation holds any more, with a
 * `student_unlinked` notice and webhook each. Call it after taking students out of shares, as
 * the last write of the transaction.
 */
export async function endUnsharedLinks(
  trx: Db,
  links: readonly Link[],
  now: number,
): Promise<{ unlinked: Link[]; webhooks: number }> {
  const byOrganisation = new Map<string, Set<string>>()
  for (const link of links) {
    const students = byOrganisation.get(link.organisationId) ?? new Set<string>()
    students.add(link.studentId)
    byOrganisation.set(link.organisationId, students)
  }
  // Two statements per chunk of students rather than two per student, as ending a large share
  // holds SQLite's write lock all the while (docs/performance.md, "Ending a share").
  const ended = new Set<string>()
  for (const [organisationId, students] of byOrganisation)
    for (const part of chunks([...students])) {
      const held = await trx
        .selectFrom('share_students')
        .select('student_id')
        .where('organisation_id', '=', organisationId)
        .where('student_id', 'in', part)
        .execute()
      const stillHeld = new Set(held.map((row) => row.student_id))
      const free = part.filter((studentId) => !stillHeld.has(studentId))
      if (free.length === 0) continue
      const removed = await trx
        .deleteFrom('student_organisations')
        .where('organisation_id', '=', organisationId)
        .where('student_id', 'in', free)
        .returning('student_id')
        .execute()
      for (const row of removed) ended.add(`${row.student_id} ${organisationId}`)
    }
  // In the order the links came, once each.
  const unlinked = [...new Map(links.map((link) => [`${link.studentId} ${link.organisationId}`, link])).entries()]
    .filter(([key]) => ended.has(key))
    .map(([, link]) => link)
  const webhooks = await announceStudentNotices(trx, 'student.unlinked', unlinked, now)
  const changedAt = isoAt(now)
  await recordStudentChanges(
    trx,
    unlinked.map((link) => ({ type: 'student_unlinked' as const, ...link, changedAt })),
  )
  return { unlinked, webhooks }
}

interface ActiveShare {
  id: string
  organisationId: string
}

/** The school shares in force of each of `schoolIds`. */
export async function activeSchoolShares(trx: Db, schoolIds: readonly string[]): Promise<Map<string, ActiveShare[]>> {
  const bySchool = new Map<string, ActiveShare[]>()
  const unique = [...new Set(schoolIds)]
  if (unique.length === 0) return bySchool
  const rows = await trx
    .selectFrom('shares')
    .select(['id', 'organisation_id', 'school_id'])
    .where('kind', '=', 'school')
    .where('ended_at', 'is', null)
    .where('school_id', 'in', unique)
    .execute()
  for (const row of rows) {
    const list = bySchool.get(row.school_id!) ?? []
    list.push({ id: row.id, organisationId: row.organisation_id })
    bySchool.set(row.school_id!, list)
  }
  return bySchool
}
