import type { Kysely } from 'kysely'

/**
 * Agreements carry what a privacy officer reads (domain/agreement-terms.ts): the purpose, the
 * kinds of data shared (space-separated `first_name tier progress`) and the disposition period,
 * the days after the agreement's end within which the partner must delete the data. Agreements
 * recorded before keep an empty purpose (shown as not recorded: it is in their signed document),
 * all three categories (what the API has shared under them) and the configured period.
 */
export async function up(db: Kysely<any>, dispositionDays: number): Promise<void> {
  await db.schema
    .alterTable('agreements')
    .addColumn('purpose', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await db.schema
    .alterTable('agreements')
    .addColumn('data_categories', 'text', (c) => c.notNull().defaultTo('first_name tier progress'))
    .execute()
  await db.schema
    .alterTable('agreements')
    .addColumn('disposition_days', 'integer', (c) => c.notNull().defaultTo(dispositionDays))
    .execute()
}
