import type { Kysely } from 'kysely'

/**
 * Where a school and a student came from (cases/roster-import/run.ts, docs/rosters.md): the source
 * system of the OneRoster export that brought them (`source.systemCode` of its manifest, or
 * `source.systemName`), and a school's district (its parent org of type district in orgs.csv).
 * A bulk export speaks only for the schools it lists, and a school another source keeps is never
 * taken over. Null where not known: made by hand, imported before sources were kept, or from an
 * export whose manifest names no source; the first export of a known source that lists such a
 * school claims it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('schools').addColumn('source', 'text').execute()
  await db.schema.alterTable('schools').addColumn('district_external_id', 'text').execute()
  await db.schema.alterTable('students').addColumn('source', 'text').execute()
}
