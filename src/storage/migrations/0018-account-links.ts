import { type Kysely, sql } from 'kysely'

/**
 * Recovery and verification (docs/accounts.md): the links mailed to an account, each a random
 * token of which only the SHA-256 is kept; whether an account's address is verified; and what
 * the Account page shows of each session (its last use, address and browser), with an id to end
 * one alone.
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('email_verified_at', 'text').execute()
  for (const column of ['id', 'last_used_at', 'last_address', 'user_agent'])
    await db.schema.alterTable('sessions').addColumn(column, 'text').execute()
  // Sessions begun before this migration get their id and a last use here; new ones at sign-in.
  const randomId = engine === 'postgres' ? sql`md5(random()::text || token_hash)` : sql`lower(hex(randomblob(16)))`
  await sql`update sessions set id = ${randomId}, last_used_at = created_at`.execute(db)
  await db.schema.createIndex('sessions_id').on('sessions').column('id').unique().execute()

  await db.schema
    .createTable('account_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    // verify-email, password-reset or email-change.
    .addColumn('purpose', 'text', (c) => c.notNull())
    // The address the link was sent to: for an e-mail change, the new one.
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    // Set when the link is used, or when a later event (a reset, a change of address) retires it.
    .addColumn('used_at', 'text')
    .execute()
  // The per-account limits count the links of a purpose issued in the last hour.
  await db.schema
    .createIndex('account_links_issued')
    .on('account_links')
    .columns(['account_id', 'purpose', 'created_at'])
    .execute()
  // The per-recipient limit on notices to an address that already has an account.
  await db.schema
    .createIndex('mail_outbox_recipient')
    .on('mail_outbox')
    .columns(['recipient', 'kind', 'created_at'])
    .execute()
}
