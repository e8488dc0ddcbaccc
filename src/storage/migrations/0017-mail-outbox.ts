import type { Kysely } from 'kysely'

/**
 * Outgoing mail (docs/email.md): a durable outbox. A request only adds a row; a worker on each
 * instance claims due rows with a lease (`sending`) before it speaks to the SMTP server, so one
 * instance sends a message at a time and a message is never sent twice after a crash mid-send
 * (such a row becomes `interrupted` and waits for the operator).
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    // In order of queueing on each engine: the Outbox page pages by it, newest first.
    .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
      engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    // What the message is for: `test` (an operator's test message), later verification, reset, ...
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    // pending, sending, sent, failed or interrupted.
    .addColumn('state', 'text', (c) => c.notNull())
    // Attempts begun: a claim counts one, so a crash mid-send is counted too.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // When a pending message is due; null in every other state.
    .addColumn('next_attempt_at', 'text')
    // Until when the instance that claimed it may send it; kept after, to recognise its outcome.
    .addColumn('lease_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('sent_at', 'text')
    // The Message-ID header it went out with.
    .addColumn('message_id', 'text')
    .execute()
  // The worker's claim: due pending messages, oldest first.
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['state', 'next_attempt_at']).execute()
  // Sends whose lease ran out (their process stopped mid-send).
  await db.schema.createIndex('mail_outbox_leases').on('mail_outbox').columns(['state', 'lease_until']).execute()
}
