import { type Kysely, sql } from 'kysely'
import type { Engine } from '../storage.js'

/**
 * The disclosure log becomes append-only on the request path (storage/disclosure-log.ts).
 *
 * Each of the three indexes on (student | organisation, at) and (at) took a write to a random
 * page per row, far dearer than appending to a table with only its primary key, and the cost
 * kept growing with the log (figures: docs/performance.md). The rows are now only appended; the
 * lookups by student, organisation and key are built per sealed segment of consecutive ids, in
 * key order, so that building them also only appends (the segment number leads the primary
 * key). Existing rows are sealed by the server in the background.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema.dropIndex('disclosures_student').execute()
  await db.schema.dropIndex('disclosures_organisation').execute()
  await db.schema.dropIndex('disclosures_at').execute()

  const bigint = engine === 'postgres' ? 'bigint' : 'integer'
  await db.schema
    .createTable('disclosure_segments')
    // The segment's first id; segments are contiguous and never overlap.
    .addColumn('first_id', bigint, (c) => c.primaryKey())
    .addColumn('last_id', bigint, (c) => c.notNull())
    // The earliest and latest `at` among its rows, for time-range queries.
    .addColumn('first_at', 'text')
    .addColumn('last_at', 'text')
    .addColumn('rows', 'integer', (c) => c.notNull())
    .addColumn('sealed_at', 'text', (c) => c.notNull())
    .execute()

  let lookup = db.schema
    .createTable('disclosure_lookup')
    .addColumn('segment', bigint, (c) => c.notNull())
    // s: student, o: organisation, k: key.
    .addColumn('dimension', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('id', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('disclosure_lookup_pk', ['segment', 'dimension', 'value', 'id'])
  // The primary key is the table: no rowid B-tree to write beside it.
  if (engine === 'sqlite') lookup = lookup.modifyEnd(sql`without rowid`)
  await lookup.execute()
}
