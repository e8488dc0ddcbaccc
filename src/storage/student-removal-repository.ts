/**
 * The rows an unlink or an erasure removes (cases/unlink.ts, cases/erasure.ts say when and who is
 * told): a student's link to one organisation, or everything the service holds about a student
 * but ids. Erasing keeps the schools the student attended (`erased_student_schools`, so the
 * district's export by school still finds its disclosure rows) and clears the webhook deliveries
 * about the student: those not sent yet end not sent, and every one loses its body and the
 * receiver's answer.
 */
import { type Kysely, sql } from 'kysely'
import { NOTICE_EVENTS } from '../domain/webhook-events.js'
import type { Database } from './tables.js'

type Db = Kysely<Database>

/** The last error a delivery about an erased student shows in the partner's delivery log. */
export const ERASED_REASON = 'the student was erased'

/** Removes the student's link to the organisation and takes it out of every share of it; true when it was linked. */
export async function deleteLink(trx: Db, studentId: string, organisationId: string): Promise<boolean> {
  let removed = 0n
  // The shares' rows first: each refers to the link, which is deleted last and counted.
  for (const table of ['share_students', 'student_organisations'] as const) {
    const result = await trx
      .deleteFrom(table)
      .where('student_id', '=', studentId)
      .where('organisation_id', '=', organisationId)
      .executeTakeFirst()
    removed = result.numDeletedRows
  }
  return removed > 0n
}

/** What deleting students' rows removed: their links, by student, and their progress entries. */
export interface DeletedStudentRows {
  links: { studentId: string; organisationId: string }[]
  /** One entry per progress row deleted, by its student's id. */
  progress: string[]
}

/**
 * Deletes the students `ids` (at most one statement's worth) with their shares, schools (kept as
 * erased at `erasedAt`), links and progress (with the lesson player's state of each lesson); links
 * and progress go before the student's row.
 */
export async function deleteStudentRows(
  trx: Db,
  ids: readonly string[],
  erasedAt: string,
): Promise<DeletedStudentRows> {
  await trx.deleteFrom('share_students').where('student_id', 'in', ids).execute()
  await trx
    .insertInto('erased_student_schools')
    .columns(['school_id', 'student_id', 'erased_at'])
    .expression(
      trx
        .selectFrom('student_schools')
        .select(['school_id', 'student_id', sql<string>`cast(${erasedAt} as text)`.as('erased_at')])
        .where('student_id', 'in', ids),
    )
    .onConflict((oc) => oc.columns(['school_id', 'student_id']).doNothing())
    .execute()
  await trx.deleteFrom('student_schools').where('student_id', 'in', ids).execute()
  const links = await trx
    .deleteFrom('student_organisations')
    .where('student_id', 'in', ids)
    .returning(['student_id', 'organisation_id'])
    .execute()
  const progress = await trx.deleteFrom('progress').where('student_id', 'in', ids).returning('student_id').execute()
  // Where the LTI lesson player had them in each lesson: their work, as the progress it made.
  await trx.deleteFrom('lti_lesson_states').where('student_id', 'in', ids).execute()
  await trx.deleteFrom('students').where('id', 'in', ids).execute()
  return {
    links: links.map((row) => ({ studentId: row.student_id, organisationId: row.organisation_id })),
    progress: progress.map((row) => row.student_id),
  }
}

/**
 * Deletes the change-log rows about the students `ids` and clears the deliveries about them;
 * returns how many rows were deleted and how many deliveries will never be sent.
 */
export async function forgetStudentHistory(
  trx: Db,
  ids: readonly string[],
): Promise<{ changes: number; cancelledDeliveries: number }> {
  const changes = await trx
    .deleteFrom('student_changes')
    .where('student_id', 'in', ids)
    // Earlier notices hold the id only, and an organisation may not have read its own yet.
    .where('organisation_id', 'is', null)
    .executeTakeFirst()
  const cancelled = await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'not_sent', next_attempt_at: null, lease_until: null, last_error: ERASED_REASON })
    .where('student_id', 'in', ids)
    .where('state', '=', 'pending')
    .where('event_type', 'not in', NOTICE_EVENTS)
    .executeTakeFirst()
  // The bodies held the student's tier and progress, and an answer may echo them.
  await trx
    .updateTable('webhook_deliveries')
    .set({ payload: '{"erased":true}', last_response: null })
    .where('student_id', 'in', ids)
    .where('event_type', 'not in', NOTICE_EVENTS)
    .execute()
  return { changes: Number(changes.numDeletedRows), cancelledDeliveries: Number(cancelled.numUpdatedRows) }
}
