import type { Kysely } from 'kysely'

/**
 * What happens once an organisation's data-sharing agreement has ended (storage/agreement-
 * dispositions.ts, docs/end-of-agreement.md).
 *
 * `agreement_dispositions`: one row per agreement whose disposition period ran out while no other
 * agreement of its organisation was in force, written in the transaction that ended the
 * organisation's shares and links. The unique agreement is what makes the work happen once
 * however many instances run it at the same moment.
 *
 * `disposition_students`: the students linked then, by id only: the partner must delete them,
 * and the certificate of deletion lists them. No foreign key to `students`, so that erasing a
 * student later leaves the record of what was deleted (an id names no child by itself).
 *
 * `deletion_attestations`: the partner's statement that it deleted the data shared under an
 * agreement, once per agreement, with who made it: a dashboard account or an API key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('agreement_dispositions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('agreement_id', 'text', (c) => c.notNull().references('agreements.id'))
    .addColumn('ended_at', 'text', (c) => c.notNull())
    .addColumn('deletion_due_at', 'text', (c) => c.notNull())
    .addColumn('unlinked_at', 'text', (c) => c.notNull())
    .addColumn('students', 'integer', (c) => c.notNull())
    .addColumn('shares_ended', 'integer', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('agreement_dispositions_agreement')
    .on('agreement_dispositions')
    .column('agreement_id')
    .unique()
    .execute()
  await db.schema
    .createIndex('agreement_dispositions_organisation')
    .on('agreement_dispositions')
    .columns(['organisation_id', 'ended_at'])
    .execute()

  await db.schema
    .createTable('disposition_students')
    .addColumn('disposition_id', 'text', (c) => c.notNull().references('agreement_dispositions.id'))
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('disposition_students_pk', ['disposition_id', 'student_id'])
    .execute()

  await db.schema
    .createTable('deletion_attestations')
    .addColumn('agreement_id', 'text', (c) => c.primaryKey().references('agreements.id'))
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('attested_at', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
    .addColumn('key_id', 'text', (c) => c.references('api_keys.id'))
    .execute()
}
