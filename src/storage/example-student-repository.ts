/**
 * A student a new key can reach, named in the dashboard's example commands so they work as
 * pasted. Kept apart from student-repository.ts: that module serves the API, where every read
 * writes a disclosure record; this one shows a partner, on their own dashboard, a first name and
 * tier of a student already linked to them.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

/** The first linked student by name: a sandbox one for a test key, a real one for a live key. */
export async function exampleStudent(
  db: Kysely<Database>,
  organisationId: string,
  sandbox: boolean,
): Promise<{ id: string; first_name: string; tier: string } | undefined> {
  return db
    .selectFrom('students as s')
    .innerJoin('student_organisations as so', 'so.student_id', 's.id')
    .select(['s.id', 's.first_name', 's.tier'])
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', sandbox ? 1 : 0)
    .orderBy('s.first_name')
    .orderBy('s.id')
    .limit(1)
    .executeTakeFirst()
}
