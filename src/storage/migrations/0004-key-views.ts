import type { Kysely } from 'kysely'

/**
 * A new key's one-time view: the key, encrypted, for the few minutes in which the page that
 * shows it may be reloaded (see src/dashboard/key-views.ts). A row is deleted when the partner
 * hides the key, or once expired with the next view added or read; it cannot be read without
 * the session cookie of the browser that created the key, which is not stored anywhere (the
 * sessions table has its hash).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('key_views')
    // SHA-256 of the view token that is in the page's address; the token itself is not stored.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('welcome', 'integer', (c) => c.notNull())
    .addColumn('sealed_key', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('key_views_expires').on('key_views').column('expires_at').execute()
}
