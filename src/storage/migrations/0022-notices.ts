import type { Kysely } from 'kysely'

/**
 * Notices (cases/notices.ts, docs/accounts.md "Notices").
 *
 * `notice_opt_outs`: the optional notices an account turned off; none by default, so every notice
 * is on until its member says otherwise. Security notices have no row here: they are always sent.
 *
 * `notices_sent`: each time-based notice sent, keyed by what it is about and which threshold it
 * marks, so that instances running the hourly task at once send it once (the key decides who).
 *
 * `known_devices`: the hash of each browser's device cookie an account signed in from, so a
 * sign-in from another one can be told to the account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('notice_opt_outs')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('notice_opt_outs_pk', ['account_id', 'topic'])
    .execute()
  await db.schema
    .createTable('notices_sent')
    .addColumn('kind', 'text', (c) => c.notNull())
    // What it is about: an agreement's or a key's id.
    .addColumn('subject', 'text', (c) => c.notNull())
    // Which of its moments: `30d`, `7d`, `14d`, `3d`, `passed`.
    .addColumn('threshold', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('notices_sent_pk', ['kind', 'subject', 'threshold'])
    .execute()
  await db.schema
    .createTable('known_devices')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    // SHA-256 (hex) of the device cookie's value; the value itself is never stored.
    .addColumn('device_hash', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('known_devices_pk', ['account_id', 'device_hash'])
    .execute()
}
