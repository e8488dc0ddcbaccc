import type { Kysely } from 'kysely'

/** The whole v1 schema. Times are ISO 8601 UTC text; see tables.ts. */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('meta')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute()
  await db
    .insertInto('meta')
    .values([
      { name: 'catalog', version: 0 },
      { name: 'access', version: 0 },
    ])
    .execute()

  await db.schema
    .createTable('tiers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('age_range', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('lessons')
    .addColumn('slug', 'text', (c) => c.primaryKey())
    .addColumn('tier', 'text', (c) => c.notNull().references('tiers.id'))
    .addColumn('lesson_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('slide_count', 'integer', (c) => c.notNull())
    .addColumn('content_types', 'text', (c) => c.notNull())
    .addColumn('standards', 'text', (c) => c.notNull())
    .addColumn('slides', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('source_file', 'text', (c) => c.notNull())
    .addUniqueConstraint('lessons_tier_lesson_id', ['tier', 'lesson_id'])
    .execute()

  await db.schema
    .createTable('organisations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('agreements')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('signed_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('document_ref', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('agreements_organisation').on('agreements').column('organisation_id').execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute()
  await db.schema.createIndex('api_keys_organisation').on('api_keys').column('organisation_id').execute()

  await db.schema
    .createTable('students')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('tier_updated_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('student_organisations')
    .addColumn('student_id', 'text', (c) => c.notNull().references('students.id'))
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('student_organisations_pk', ['student_id', 'organisation_id'])
    .execute()
  await db.schema
    .createIndex('student_organisations_organisation')
    .on('student_organisations')
    .column('organisation_id')
    .execute()

  // No foreign key to lessons: progress outlives a lesson that a later import removes.
  await db.schema
    .createTable('progress')
    .addColumn('student_id', 'text', (c) => c.notNull().references('students.id'))
    .addColumn('lesson_slug', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('xp', 'integer', (c) => c.notNull())
    .addColumn('time_seconds', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addPrimaryKeyConstraint('progress_pk', ['student_id', 'lesson_slug'])
    .execute()

  // No foreign keys: the log records attempts on ids that may not exist, and must outlive
  // anything it mentions.
  await db.schema
    .createTable('disclosures')
    .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
      engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('student_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('disclosures_at').on('disclosures').column('at').execute()
  await db.schema.createIndex('disclosures_student').on('disclosures').columns(['student_id', 'at']).execute()
  await db.schema.createIndex('disclosures_organisation').on('disclosures').columns(['organisation_id', 'at']).execute()
}
