/**
 * The writes of the CSV and JSON Lines imports, one batch of checked rows at a time in the
 * transaction the import run opened (imports/record-import.ts): students, lesson progress, links
 * held by the file's list shares, and school members, whose joining and leaving moves the links
 * the schools' shares hold (cases/school-attendance.ts).
 */
import type { Kysely } from 'kysely'
import type { Attendance } from '../storage/school-share-repository.js'
import { changeAttendance } from './school-attendance.js'
import {
  type LinkImportRow,
  type LinkShares,
  linkStudents,
  type Progress,
  type ProgressImportRow,
  type StudentImportRow,
  upsertProgress,
  upsertStudents,
} from '../storage/student-import-repository.js'
import type { Database } from '../storage/tables.js'

/** A row of a members file. */
export interface MembershipRow extends Attendance {
  /** The row records the student leaving the school rather than attending it. */
  left: boolean
}

/** New students added and known ones renamed or moved to another tier, each tier change logged. */
export function importStudents(
  db: Kysely<Database>,
  rows: readonly StudentImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  return upsertStudents(db, rows, now, progress)
}

/** Lesson progress added or replaced, each change logged. */
export function importProgress(
  db: Kysely<Database>,
  rows: readonly ProgressImportRow[],
  now: number,
  progress?: Progress,
): Promise<void> {
  return upsertProgress(db, rows, now, progress)
}

/** Students linked to partners, each link held by the import's list share of its organisation. */
export function importLinks(
  db: Kysely<Database>,
  rows: readonly LinkImportRow[],
  now: number,
  progress: Progress | undefined,
  shares: LinkShares,
): Promise<void> {
  return linkStudents(db, rows, now, progress, shares)
}

/** Students join and leave schools; the links the schools' shares hold follow. */
export async function importMemberships(db: Kysely<Database>, rows: readonly MembershipRow[], now: number) {
  const pair = (row: MembershipRow): Attendance => ({ studentId: row.studentId, schoolId: row.schoolId })
  await changeAttendance(
    db,
    { joined: rows.filter((row) => !row.left).map(pair), left: rows.filter((row) => row.left).map(pair) },
    now,
  )
}
