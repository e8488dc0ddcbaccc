import type { Kysely } from 'kysely'

/**
 * The request log (docs/request-log.md): the API requests answered to organisations' keys, kept
 * 7 days, one row per batch of an organisation's entries (storage/request-log-batches.ts says what
 * a row holds and why). Never a body, a query value or a raw path: routes are the router's templates.
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('request_log')
    // A plain rowid on SQLite: AUTOINCREMENT would write its counter with every batch.
    .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    // Milliseconds since the epoch: the batch's first and last request.
    .addColumn('first_at', 'bigint', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addColumn('entries', 'integer', (c) => c.notNull())
    // A bit per status class present: 1 << 2 for 2xx, and so on.
    .addColumn('statuses', 'integer', (c) => c.notNull())
    // The batch's dictionaries: key ids, problem codes and client addresses separated by spaces,
    // "METHOD route" lines separated by newlines.
    .addColumn('key_ids', 'text', (c) => c.notNull())
    .addColumn('routes', 'text', (c) => c.notNull())
    .addColumn('problems', 'text', (c) => c.notNull())
    .addColumn('addresses', 'text', (c) => c.notNull())
    .addColumn('data', engine === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .execute()
  // An organisation's batches newest first; a request id's batches by the time it carries.
  await db.schema
    .createIndex('request_log_organisation')
    .on('request_log')
    .columns(['organisation_id', 'last_at', 'id'])
    .execute()
  // Every organisation's newest first (the operator's page), and the oldest for pruning.
  await db.schema.createIndex('request_log_at').on('request_log').columns(['last_at', 'id']).execute()
}
