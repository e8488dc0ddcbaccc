import type { Kysely } from 'kysely'

/**
 * A lesson's standards as aligned at import: each code with the CASE identifier and URI of its
 * item when the framework's map has them (catalog/case/<framework>.json), as a JSON array. Lessons
 * imported before it hold none (null), which reads as their codes without identifiers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lessons').addColumn('standards_alignment', 'text').execute()
}
