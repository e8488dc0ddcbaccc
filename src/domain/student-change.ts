/**
 * What the progress change feed carries: every change of a student's tier or of one of their
 * progress entries, and the notices that a student left an organisation (unlinked) or was
 * erased, in the order they were committed (storage/student-change-log.ts).
 */
import type { ProgressEntry } from './progress.js'
import type { TierId } from './tiers.js'

/** Changes of a linked student's data, shown to every organisation the student is linked to. */
export const STUDENT_CHANGE_TYPES = ['tier_changed', 'progress_updated'] as const
export type StudentChangeType = (typeof STUDENT_CHANGE_TYPES)[number]

/**
 * Notices to one organisation that it must drop its copy of a student: they carry the student's
 * id and the time only, since the student's data may be gone.
 */
export const STUDENT_NOTICE_TYPES = ['student_unlinked', 'student_deleted'] as const
export type StudentNoticeType = (typeof STUDENT_NOTICE_TYPES)[number]

/** Every kind of row of the change log. */
export type StudentChangeKind = StudentChangeType | StudentNoticeType

/** A change as a writer records it; the log gives it its sequence number. */
export type NewStudentChange =
  | { type: 'tier_changed'; studentId: string; tier: TierId; changedAt: string }
  | { type: 'progress_updated'; studentId: string; entry: ProgressEntry; changedAt: string }

/** A notice as a writer records it, for one organisation. */
export interface NewStudentNotice {
  type: StudentNoticeType
  studentId: string
  organisationId: string
  changedAt: string
}
