/**
 * What the LTI lesson player reads and writes of a student's lesson (cases/lti-progress.ts): the
 * player's state of the lesson and the progress entry it makes. The two "claim" statements lock
 * their row on PostgreSQL (an INSERT ... ON CONFLICT DO UPDATE and an UPDATE take the row's lock,
 * wait for a writer holding it and then return what it committed), so steps of one student's
 * lesson run one after another on both engines without a dialect branch; a SQLite writer runs
 * alone already.
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { LessonState } from '../domain/lesson-steps.js'
import type { ProgressEntry } from '../domain/progress.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

export interface StudentLesson {
  studentId: string
  lessonSlug: string
}

export async function studentExists(db: Db, studentId: string): Promise<boolean> {
  return (await db.selectFrom('students').select('id').where('id', '=', studentId).executeTakeFirst()) !== undefined
}

/**
 * The student's state of the lesson, locked until the transaction ends: `fresh` stored first
 * when there is none.
 */
export async function claimLessonState(trx: Db, lesson: StudentLesson, fresh: LessonState): Promise<LessonState> {
  const row = await trx
    .insertInto('lti_lesson_states')
    .values({
      student_id: lesson.studentId,
      lesson_slug: lesson.lessonSlug,
      slides_done: fresh.slidesDone,
      first_tries: JSON.stringify(fresh.firstTries),
      last_step_at: isoAt(fresh.lastStepAt),
    })
    // Writing a column with its own value takes the lock and returns the row as committed.
    .onConflict((oc) =>
      oc
        .columns(['student_id', 'lesson_slug'])
        .doUpdateSet({ slides_done: (eb) => eb.ref('lti_lesson_states.slides_done') }),
    )
    .returning(['slides_done', 'first_tries', 'last_step_at'])
    .executeTakeFirstOrThrow()
  return {
    slidesDone: Number(row.slides_done),
    firstTries: JSON.parse(row.first_tries) as Record<number, boolean>,
    lastStepAt: Date.parse(row.last_step_at),
  }
}

export async function saveLessonState(trx: Db, lesson: StudentLesson, state: LessonState): Promise<void> {
  await trx
    .updateTable('lti_lesson_states')
    .set({
      slides_done: state.slidesDone,
      first_tries: JSON.stringify(state.firstTries),
      last_step_at: isoAt(state.lastStepAt),
    })
    .where('student_id', '=', lesson.studentId)
    .where('lesson_slug', '=', lesson.lessonSlug)
    .execute()
}

/** The student's progress entry of the lesson, locked until the transaction ends; undefined when there is none. */
export async function claimProgressEntry(trx: Db, lesson: StudentLesson): Promise<ProgressEntry | undefined> {
  const row = await trx
    .updateTable('progress')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('student_id', '=', lesson.studentId)
    .where('lesson_slug', '=', lesson.lessonSlug)
    .returning(['status', 'xp', 'time_seconds', 'started_at', 'completed_at'])
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    lessonSlug: lesson.lessonSlug,
    status: row.status,
    xp: Number(row.xp),
    timeSeconds: Number(row.time_seconds),
    startedAt: row.started_at,
    completedAt: row.completed_at,
  }
}

/**
 * Writes the entry, then the student's `updated_at`: in the order an import writes them (progress rows, then
 * students), so that the two never wait for each other in a circle.
 */
export async function writeProgressEntry(trx: Db, studentId: string, entry: ProgressEntry, at: string): Promise<void> {
  const values = {
    status: entry.status,
    xp: entry.xp,
    time_seconds: entry.timeSeconds,
    started_at: entry.startedAt,
    completed_at: entry.completedAt,
  }
  await trx
    .insertInto('progress')
    .values({ student_id: studentId, lesson_slug: entry.lessonSlug, ...values })
    .onConflict((oc) => oc.columns(['student_id', 'lesson_slug']).doUpdateSet(values))
    .execute()
  await trx.updateTable('students').set({ updated_at: at }).where('id', '=', studentId).execute()
}
