import { type Kysely, sql } from 'kysely'

/**
 * What a certificate of deletion covers (storage/deletion-list-repository.ts, docs/end-of-agreement.md).
 *
 * `student_departures`: each notice that a student left a partner organisation (`student.unlinked`
 * or `student.deleted`), by ids and time only, written in the transaction that sends it. The change
 * feed's copy goes with the feed's retention (90 days by default); this one stays, so that the
 * end of an agreement a year long still knows every student the partner was asked to delete and
 * when. Filled from the notices the feed and the webhook outbox still hold.
 *
 * `deletion_attestations.students`: how many students the deletion list held when the partner
 * attested it, so that the certificate can say whether the attestation covers its whole list;
 * null for attestations recorded before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('student_departures')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('student_departures_pk', ['organisation_id', 'student_id', 'at', 'event'])
    .execute()
  // Counting an end's departures reads its time only, not the disposition's own (at its end).
  await db.schema
    .createIndex('student_departures_time')
    .on('student_departures')
    .columns(['organisation_id', 'at'])
    .execute()
  await sql`insert into student_departures (organisation_id, student_id, at, event)
    select organisation_id, student_id, changed_at,
      case kind when 'student_unlinked' then 'student.unlinked' else 'student.deleted' end
    from student_changes where organisation_id is not null
    union
    select e.organisation_id, d.student_id, d.created_at, d.event_type
    from webhook_deliveries as d inner join webhook_endpoints as e on e.id = d.endpoint_id
    where d.event_type in ('student.unlinked', 'student.deleted') and d.student_id is not null`.execute(db)
  await db.schema.alterTable('deletion_attestations').addColumn('students', 'integer').execute()
}
