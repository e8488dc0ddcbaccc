import type { Kysely } from 'kysely'

/**
 * `erased_student_schools`: the schools a student attended when it was erased, by ids only
 * (cases/erasure.ts). Erasing deletes the student's attendance with its name, but the
 * disclosure log keeps the student's rows precisely so the district can still answer for them,
 * and a district asks by school: the export by school reads this beside `student_schools`.
 * No foreign keys: the student is gone, and an id names no child by itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('erased_student_schools')
    .addColumn('school_id', 'text', (c) => c.notNull())
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addColumn('erased_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('erased_student_schools_pk', ['school_id', 'student_id'])
    .execute()
}
