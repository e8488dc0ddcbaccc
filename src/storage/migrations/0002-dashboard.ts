import type { Kysely } from 'kysely'

/**
 * The administrative dashboard: accounts and sessions, access applications, sandbox
 * organisations and students, per-key daily usage, the operator audit log, and settings
 * shared by every instance (the dashboard's signing secret).
 */
export async function up(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<void> {
  // `partner` organisations come from approved applications (or the CLI); `sandbox` ones hold a
  // partner's synthetic test students and are reached only by test keys.
  await db.schema
    .alterTable('organisations')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('partner'))
    .execute()
  // Scopes the operator granted; keys of the organisation are created within them.
  await db.schema
    .alterTable('organisations')
    .addColumn('allowed_scopes', 'text', (c) => c.notNull().defaultTo('students:read students:write'))
    .execute()
  await db.schema
    .alterTable('students')
    .addColumn('sandbox', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute()

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.references('organisations.id'))
    .addColumn('sandbox_organisation_id', 'text', (c) => c.references('organisations.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sessions_account').on('sessions').column('account_id').execute()

  await db.schema
    .createTable('applications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('organisation_name', 'text', (c) => c.notNull())
    .addColumn('website', 'text', (c) => c.notNull())
    .addColumn('contact_name', 'text', (c) => c.notNull())
    .addColumn('contact_email', 'text', (c) => c.notNull())
    .addColumn('intended_use', 'text', (c) => c.notNull())
    .addColumn('requested_scopes', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('decision_reason', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('organisation_id', 'text', (c) => c.references('organisations.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('applications_state').on('applications').columns(['state', 'created_at']).execute()
  await db.schema.createIndex('applications_account').on('applications').column('account_id').execute()

  await db.schema
    .createTable('usage_daily')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .addColumn('throttled', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['key_id', 'day'])
    .execute()

  await db.schema
    .createTable('audit_log')
    .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
      engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute()

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute()
}
