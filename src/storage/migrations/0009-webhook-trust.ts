import type { Kysely } from 'kysely'

/**
 * Webhooks that stop when access ends, disclose every send once, and share the senders fairly
 * (src/webhooks): a delivery may end `not_sent`, remembers when its body was first sent (the one
 * disclosure row it writes), and endpoints keep what fair claiming and back-off need, with a
 * log of the sends their partner asked for by hand (test events and resends), which are limited.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // When a body of this delivery first left for the endpoint; set once, with its disclosure row.
  await db.schema.alterTable('webhook_deliveries').addColumn('first_sent_at', 'text').execute()
  // When deliveries of this endpoint were last claimed: the least recently served go first.
  await db.schema.alterTable('webhook_endpoints').addColumn('claimed_at', 'text').execute()
  // After attempts that timed out, nothing more is sent to the endpoint until then.
  await db.schema.alterTable('webhook_endpoints').addColumn('backoff_until', 'text').execute()
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('timeouts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint_due')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'state', 'next_attempt_at'])
    .execute()
  await db.schema
    .createTable('webhook_manual_sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_manual_sends_endpoint')
    .on('webhook_manual_sends')
    .columns(['endpoint_id', 'at'])
    .execute()
}
