import { type Kysely, sql } from 'kysely'

/**
 * Unlinking and erasing students (cases/unlink.ts, cases/erasure.ts).
 *
 * `student_changes.organisation_id`: null on a change of a student's data (shown to every
 * organisation the student is linked to); on a notice (`student_unlinked`, `student_deleted`)
 * the one organisation it is for, since the student is no longer linked to it, or gone. A
 * partial index finds an organisation's notices by number without growing with the data changes.
 *
 * Erasing a student deletes their change-log rows (they hold progress) and clears the webhook
 * deliveries about them: both are found by student, which needs an index of their own.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('student_changes').addColumn('organisation_id', 'text').execute()
  await sql`create index student_changes_notices on student_changes (organisation_id, seq)
    where organisation_id is not null`.execute(db)
  await db.schema.createIndex('student_changes_student').on('student_changes').column('student_id').execute()
  await sql`create index webhook_deliveries_student on webhook_deliveries (student_id)
    where student_id is not null`.execute(db)
}
