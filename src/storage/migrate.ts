/**
 * One ordered list of migrations for both engines. Kysely's migrator takes a lock, so several
 * instances starting together migrate once.
 */
import { DEFAULT_MIGRATION_TABLE, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Storage } from './storage.js'
import * as initial from './migrations/0001-initial.js'
import * as dashboard from './migrations/0002-dashboard.js'
import * as accessChanges from './migrations/0003-access-changes.js'
import * as keyViews from './migrations/0004-key-views.js'
import * as disclosureSegments from './migrations/0005-disclosure-segments.js'
import * as studentChanges from './migrations/0006-student-changes.js'
import * as webhooks from './migrations/0007-webhooks.js'
import * as clusteredProgress from './migrations/0008-clustered-progress.js'
import * as webhookTrust from './migrations/0009-webhook-trust.js'
import * as studentNotices from './migrations/0010-student-notices.js'
import * as agreementTerms from './migrations/0011-agreement-terms.js'
import * as schoolsAndShares from './migrations/0012-schools-and-shares.js'
import * as agreementDisposition from './migrations/0013-agreement-disposition.js'
import { DEFAULT_DISPOSITION_DAYS } from '../domain/agreement-terms.js'

/** What some migrations fill existing rows with, from the configuration of whoever migrates. */
export interface MigrationDefaults {
  /** AGREEMENT_DISPOSITION_DAYS: the disposition period of agreements recorded before periods were. */
  agreementDispositionDays?: number
}

function migrations(storage: Storage, defaults: MigrationDefaults = {}): Record<string, Migration> {
  return {
    '0001-initial': { up: (db) => initial.up(db, storage.engine) },
    '0002-dashboard': { up: (db) => dashboard.up(db, storage.engine) },
    '0003-access-changes': { up: (db) => accessChanges.up(db) },
    '0004-key-views': { up: (db) => keyViews.up(db) },
    '0005-disclosure-segments': { up: (db) => disclosureSegments.up(db, storage.engine) },
    '0006-student-changes': { up: (db) => studentChanges.up(db, storage.engine) },
    '0007-webhooks': { up: (db) => webhooks.up(db) },
    '0008-clustered-progress': { up: (db) => clusteredProgress.up(db, storage.engine) },
    '0009-webhook-trust': { up: (db) => webhookTrust.up(db) },
    '0010-student-notices': { up: (db) => studentNotices.up(db) },
    '0011-agreement-terms': {
      up: (db) => agreementTerms.up(db, defaults.agreementDispositionDays ?? DEFAULT_DISPOSITION_DAYS),
    },
    '0012-schools-and-shares': { up: (db) => schoolsAndShares.up(db, new Date().toISOString()) },
    '0013-agreement-disposition': { up: (db) => agreementDisposition.up(db) },
  }
}

export interface MigrationReport {
  applied: string[]
}

/**
 * True when the database lists every migration as applied, the usual case at start: then the
 * migrator (its lock table, lock and reads) is not needed. A table not there yet means no.
 */
async function allApplied(storage: Storage): Promise<boolean> {
  const table = storage.schema === undefined ? DEFAULT_MIGRATION_TABLE : `${storage.schema}.${DEFAULT_MIGRATION_TABLE}`
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(storage.db)
    const applied = new Set(rows.map((row) => row.name))
    return Object.keys(migrations(storage)).every((name) => applied.has(name))
  } catch {
    return false
  }
}

/**
 * Applies every migration not applied yet, or only those up to and including `upTo` (to test a
 * migration over data written before it).
 */
export async function migrate(
  storage: Storage,
  upTo?: string,
  defaults: MigrationDefaults = {},
): Promise<MigrationReport> {
  if (upTo === undefined && (await allApplied(storage))) return { applied: [] }
  if (storage.schema !== undefined) {
    await sql`create schema if not exists ${sql.id(storage.schema)}`.execute(storage.db)
  }
  const provider: MigrationProvider = { getMigrations: async () => migrations(storage, defaults) }
  const migrator = new Migrator({
    db: storage.db,
    provider,
    // Without it Kysely would find another schema's migration tables and skip creating its own.
    ...(storage.schema === undefined ? {} : { migrationTableSchema: storage.schema }),
  })
  const { error, results } = await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo))
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error))
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}
