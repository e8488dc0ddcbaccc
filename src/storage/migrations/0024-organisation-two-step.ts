import type { Kysely } from 'kysely'

/**
 * An owner may require a second factor of every member of the organisation (docs/accounts.md):
 * 1 when required. Existing organisations do not require it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('organisations')
    .addColumn('require_second_factor', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
