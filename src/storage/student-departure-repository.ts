/**
 * The record of students leaving partner organisations (migration 0016): one row per
 * `student.unlinked` or `student.deleted` notice, ids and time only, written beside the notice.
 * The change feed forgets its copy with its retention; the end of an agreement needs to know,
 * however long the agreement ran, every student the partner was asked to delete and when
 * (deletion-list.ts).
 */
import type { Kysely } from 'kysely'
import { isoAt } from '../clock.js'
import type { NoticeEvent } from '../domain/webhook-events.js'
import type { Database } from './tables.js'

/** Rows per INSERT: 4 values each, well under both engines' parameter limits. */
const CHUNK = 500

/** Records that each of `notices`' students left its organisation at `now`. Run it in the notice's transaction. */
export async function recordDepartures(
  trx: Kysely<Database>,
  event: NoticeEvent,
  notices: readonly { studentId: string; organisationId: string }[],
  now: number,
): Promise<void> {
  const at = isoAt(now)
  for (let from = 0; from < notices.length; from += CHUNK)
    await trx
      .insertInto('student_departures')
      .values(
        notices.slice(from, from + CHUNK).map((notice) => ({
          organisation_id: notice.organisationId,
          student_id: notice.studentId,
          at,
          event,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute()
}
