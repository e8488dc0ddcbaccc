import type { Kysely } from 'kysely'

/**
 * Rolling a key (cases/api-keys.ts `rollKey`): the old key records when it was rolled and which
 * key replaced it, and keeps working until its `expires_at`, the end of the overlap. Last use
 * also keeps the client address and user agent family of a request in its window.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['rolled_at', 'replaced_by', 'last_used_address', 'last_used_agent']) {
    await db.schema.alterTable('api_keys').addColumn(column, 'text').execute()
  }
}
