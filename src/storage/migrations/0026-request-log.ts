import type { Kysely } from 'kysely'

/**
 * The request log (docs/request-log.md): one row per API request answered to an organisation's key,
 * written in batches by services/request-log.ts and kept 7 days. Never a body, a query value or a
 * raw path: the route is the router's template.
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('request_log')
    // A plain rowid on SQLite: AUTOINCREMENT would write its counter with every batch.
    .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    // Milliseconds since the epoch.
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('problem', 'text')
    .addColumn('latency_ms', 'real', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('request_log_organisation')
    .on('request_log')
    .columns(['organisation_id', 'at', 'id'])
    .execute()
  await db.schema.createIndex('request_log_request').on('request_log').column('request_id').execute()
  await db.schema.createIndex('request_log_at').on('request_log').columns(['at', 'id']).execute()
}
