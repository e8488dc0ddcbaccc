/** What the tests of links and shares read back: whom an organisation reaches, by student id. */
import type { Kysely } from 'kysely'
import type { Database } from '../../src/storage/tables.js'

/**
 * The ids, in order, of the students linked to the organisation (`student_organisations`), or
 * held for it by some share (`share_students`).
 */
export async function studentIdsOf(
  db: Kysely<Database>,
  organisationId: string,
  table: 'student_organisations' | 'share_students' = 'student_organisations',
): Promise<string[]> {
  const rows = await db
    .selectFrom(table)
    .select('student_id')
    .where('organisation_id', '=', organisationId)
    .orderBy('student_id')
    .execute()
  return rows.map((row) => row.student_id)
}

/** Every link, by student and then organisation: the state a test compares before and after a refused change. */
export function allLinks(db: Kysely<Database>): Promise<{ student_id: string; organisation_id: string }[]> {
  return db
    .selectFrom('student_organisations')
    .select(['student_id', 'organisation_id'])
    .orderBy('student_id')
    .orderBy('organisation_id')
    .execute()
}
