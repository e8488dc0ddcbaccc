/**
 * The students LTI launches made (migration 0028): one per registration and `sub`, the platform's
 * stable id of its user, which is all that names them there.
 */
import type { Kysely } from 'kysely'
import { newStudentRow } from './student-repository.js'
import type { Database } from './tables.js'
import type { TierId } from '../domain/tiers.js'

type Db = Kysely<Database>

export async function ltiStudentId(db: Db, registrationId: string, sub: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('lti_students')
    .select('student_id')
    .where('registration_id', '=', registrationId)
    .where('sub', '=', sub)
    .executeTakeFirst()
  return row?.student_id
}

/** The `sub` a student is known by at a registration: where their scores go. */
export async function subOfStudent(db: Db, registrationId: string, studentId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('lti_students')
    .select('sub')
    .where('registration_id', '=', registrationId)
    .where('student_id', '=', studentId)
    .executeTakeFirst()
  return row?.sub
}

/** Claims (registration, sub) for `studentId`; false when another launch claimed it first. */
export async function claimLtiStudent(
  trx: Db,
  row: { registration_id: string; sub: string; student_id: string; created_at: string },
): Promise<boolean> {
  const inserted = await trx
    .insertInto('lti_students')
    .values(row)
    .onConflict((oc) => oc.columns(['registration_id', 'sub']).doNothing())
    .returning('student_id')
    .executeTakeFirst()
  return inserted !== undefined
}

export async function insertLtiStudentRow(
  trx: Db,
  student: { id: string; firstName: string; tier: TierId },
  at: string,
): Promise<void> {
  await trx
    .insertInto('students')
    .values({ ...newStudentRow(student, at, 0), source: 'lti' })
    .execute()
}
