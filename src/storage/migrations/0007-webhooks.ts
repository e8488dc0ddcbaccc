import type { Kysely } from 'kysely'

/**
 * Webhooks (src/webhooks): the endpoints partners register, and an outbox of deliveries written
 * in the same transaction as the change they announce, drained by a worker on every instance
 * (a lease on each row means one instance sends it at a time).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    // `live` endpoints hear about real students, `test` ones about sandbox students.
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // Space-separated event types.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    // The secret before the last roll, still signed with until `previous_secret_until`.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    // Since when every attempt has failed; null after a success.
    .addColumn('failing_since', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_organisation')
    .on('webhook_endpoints')
    .column('organisation_id')
    .execute()

  await db.schema
    .createTable('webhook_deliveries')
    // The `webhook-id` the receiver sees: the same on every attempt, so it can drop repeats.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // The student the event is about, for the disclosure record; null for catalog events.
    .addColumn('student_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    // pending, delivered or failed.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_latency_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_response', 'text')
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at'])
    .execute()
}
