/**
 * What the progress change feed carries: every change of a student's tier or of one of their
 * progress entries, in the order the changes were committed (storage/student-change-log.ts).
 */
import type { ProgressEntry } from './progress.js'
import type { TierId } from './tiers.js'

export const STUDENT_CHANGE_TYPES = ['tier_changed', 'progress_updated'] as const
export type StudentChangeType = (typeof STUDENT_CHANGE_TYPES)[number]

/** A change as a writer records it; the log gives it its sequence number. */
export type NewStudentChange =
  | { type: 'tier_changed'; studentId: string; tier: TierId; changedAt: string }
  | { type: 'progress_updated'; studentId: string; entry: ProgressEntry; changedAt: string }
