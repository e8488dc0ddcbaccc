/**
 * The progress a learner's work in the LTI lesson player records (docs/lti.md#progress-and-xp):
 * each step through a lesson (domain/lesson-steps.ts) writes the student's progress entry, its
 * change to the change feed and its announcement to webhooks in one transaction of the write
 * queue, as an enroll does, so the API, the feed and the webhooks serve what the player recorded.
 *
 * No disclosure row is written here: the learner sees their own lesson and no partner is told
 * anything by the step itself. Those who are told record their own disclosures when they are:
 * a partner's API read and change feed page (cases/progress-read.ts, change-feed-read.ts), each
 * webhook delivery sent (webhooks/), each score sent to the platform (cases/lti-scores.ts).
 */
import { isoAt } from '../clock.js'
import { type LessonStep, newLessonState, takeStep } from '../domain/lesson-steps.js'
import type { LtiRole } from '../domain/lti-player-session.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { NewStudentChange } from '../domain/student-change.js'
import {
  claimLessonState,
  claimProgressEntry,
  type StudentLesson,
  saveLessonState,
  studentExists,
  writeProgressEntry,
} from '../storage/lti-progress-repository.js'
import { recordStudentChanges } from '../storage/student-change-log.js'
import { announceStudentChanges } from '../storage/webhook-repository.js'
import type { WriteQueue } from '../storage/write-queue.js'

export type { StudentLesson } from '../storage/lti-progress-repository.js'

/**
 * Whether a launch's work is recorded: a learner's with a student, not a teacher's or an
 * administrator's (who may look at a lesson as learners do), nor one without `sub` (no student).
 */
export function recordsProgress(session: { studentId: string | null; roles: readonly LtiRole[] }): boolean {
  return (
    session.studentId !== null &&
    session.roles.includes('learner') &&
    !session.roles.includes('instructor') &&
    !session.roles.includes('administrator')
  )
}

/**
 * Records `step` of the student's lesson at `now` and resolves with the entry as it now is, once
 * committed; undefined when the student is gone (erased while the lesson was open: nothing is
 * recorded). Steps of one student's lesson serialise on the lesson's state row, so a page posted
 * twice at once (a double click) counts its time and XP once: the second step finds the first's
 * state, adds the time since it (none) and earns what was earned already.
 */
export async function recordLessonStep(
  writes: WriteQueue,
  lesson: StudentLesson,
  step: LessonStep,
  now: number,
): Promise<ProgressEntry | undefined> {
  return writes.transaction(async (trx) => {
    if (!(await studentExists(trx, lesson.studentId))) return undefined
    const state = await claimLessonState(trx, lesson, newLessonState(now))
    const previous = await claimProgressEntry(trx, lesson)
    const outcome = takeStep(lesson.lessonSlug, previous, state, step, now)
    await saveLessonState(trx, lesson, outcome.state)
    if (!outcome.changed) return outcome.entry
    const at = isoAt(now)
    await writeProgressEntry(trx, lesson.studentId, outcome.entry, at)
    const change: NewStudentChange = {
      type: 'progress_updated',
      studentId: lesson.studentId,
      entry: outcome.entry,
      changedAt: at,
    }
    // As an import announces it: one query when no endpoint is enabled at all.
    await announceStudentChanges(trx, [change], now)
    // Scores for the platforms' gradebooks join the change here, in this transaction:
    // queueScores(trx, change) from cases/lti-scores.ts.
    // Last: the change log's counter is held from here to the commit.
    await recordStudentChanges(trx, [change])
    return outcome.entry
  })
}
