import type { Kysely } from 'kysely'

/**
 * The access change log: one row per change that can make a cached key record wrong (a key
 * revoked, an organisation suspended or reinstated, an agreement recorded or ended), so each
 * instance evicts only the keys a change concerns instead of its whole key cache. Creating a
 * key writes nothing here: a new key is simply a cache miss.
 *
 * `seq` is not a serial: the writer takes it from the `access` version it bumps in the same
 * transaction. The bump locks the `meta` row until commit, so sequence numbers become visible
 * in order and without gaps, and a reader that has seen `seq` n has seen everything before it.
 * (A PostgreSQL serial is handed out at insert time, and a later number can commit first.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('access_changes')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .execute()
}
