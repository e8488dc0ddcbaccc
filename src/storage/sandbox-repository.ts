/**
 * The storage side of a partner's sandbox: an organisation of kind `sandbox` whose students are
 * synthetic (`students.sandbox = 1`). Making a sandbox is a use case and lives in
 * cases/sandbox.ts; this module only reads and writes rows.
 */
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'
import type { StudentImportRow } from './student-import-repository.js'
import { newStudentRow } from './student-repository.js'

/** What synthetic progress needs to know of each lesson, in catalog order. */
export async function lessonOutlines(
  db: Kysely<Database>,
): Promise<{ slug: string; tier: string; slideCount: number }[]> {
  const lessons = await db.selectFrom('lessons').select(['slug', 'tier', 'slide_count']).orderBy('position').execute()
  return lessons.map((l) => ({ slug: l.slug, tier: l.tier, slideCount: Number(l.slide_count) }))
}

/**
 * Inserts synthetic students, marked as sandbox rows. Inserted, never upserted: an id that some
 * student already has fails the insert instead of overwriting that student.
 */
export async function insertSandboxStudents(
  trx: Kysely<Database>,
  students: readonly StudentImportRow[],
  at: string,
): Promise<void> {
  await trx
    .insertInto('students')
    .values(students.map((student) => newStudentRow(student, at, 1)))
    .execute()
}

/** The sandbox's students, for the partner's dashboard (ids to try the API with). */
export async function sandboxStudents(
  db: Kysely<Database>,
  organisationId: string,
): Promise<{ id: string; first_name: string; tier: string }[]> {
  return db
    .selectFrom('students as s')
    .innerJoin('student_organisations as so', 'so.student_id', 's.id')
    .select(['s.id', 's.first_name', 's.tier'])
    .where('so.organisation_id', '=', organisationId)
    .where('s.sandbox', '=', 1)
    .orderBy('s.first_name')
    .execute()
}
