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
import * as rosterSources from './migrations/0014-roster-sources.js'
import * as erasedStudentSchools from './migrations/0015-erased-student-schools.js'
import * as studentDepartures from './migrations/0016-student-departures.js'
import * as mailOutbox from './migrations/0017-mail-outbox.js'
import * as accountLinks from './migrations/0018-account-links.js'
import * as secondFactors from './migrations/0019-second-factors.js'
import * as memberships from './migrations/0020-memberships.js'
import * as secondFactorSessions from './migrations/0021-second-factor-sessions.js'
import * as notices from './migrations/0022-notices.js'
import * as operatorRoles from './migrations/0023-operator-roles.js'
import * as organisationTwoStep from './migrations/0024-organisation-two-step.js'
import * as passkeyChallenges from './migrations/0025-passkey-challenges.js'
import * as keyRolling from './migrations/0026-key-rolling.js'
import * as requestLog from './migrations/0027-request-log.js'
import * as lti from './migrations/0028-lti.js'
import * as standardsAlignment from './migrations/0029-standards-alignment.js'
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
    '0014-roster-sources': { up: (db) => rosterSources.up(db) },
    '0015-erased-student-schools': { up: (db) => erasedStudentSchools.up(db) },
    '0016-student-departures': { up: (db) => studentDepartures.up(db) },
    '0017-mail-outbox': { up: (db) => mailOutbox.up(db, storage.engine) },
    '0018-account-links': { up: (db) => accountLinks.up(db, storage.engine) },
    '0019-second-factors': { up: (db) => secondFactors.up(db, storage.engine) },
    '0020-memberships': { up: (db) => memberships.up(db) },
    '0021-second-factor-sessions': { up: (db) => secondFactorSessions.up(db) },
    '0022-notices': { up: (db) => notices.up(db) },
    '0023-operator-roles': { up: (db) => operatorRoles.up(db) },
    '0024-organisation-two-step': { up: (db) => organisationTwoStep.up(db) },
    '0025-passkey-challenges': { up: (db) => passkeyChallenges.up(db) },
    '0026-key-rolling': { up: (db) => keyRolling.up(db) },
    '0027-request-log': { up: (db) => requestLog.up(db, storage.engine) },
    '0028-lti': { up: (db) => lti.up(db) },
    '0029-standards-alignment': { up: (db) => standardsAlignment.up(db) },
  }
}

export interface MigrationReport {
  applied: string[]
}

/** The migrations this code knows, in the order they apply. */
export function knownMigrations(): string[] {
  // The migrations' closures are never called here, so no storage is needed to list their names.
  return Object.keys(migrations({} as Storage))
}

/** How the migrations a database lists compare with those this code knows. */
export interface MigrationState {
  /** Listed by the database, in the order they were applied. */
  applied: string[]
  /** Known to this code and not applied yet. */
  pending: string[]
  /** Listed by the database and unknown to this code: a newer version migrated it. */
  unknown: string[]
}

/** Compares the names a database (or a backup) lists with those this code knows. */
export function compareMigrations(applied: readonly string[]): MigrationState {
  const known = knownMigrations()
  const listed = new Set(applied)
  const knownSet = new Set(known)
  return {
    applied: [...applied],
    pending: known.filter((name) => !listed.has(name)),
    unknown: applied.filter((name) => !knownSet.has(name)),
  }
}

/** Thrown when the database was migrated by a newer version of the service than this one. */
export class NewerDatabaseError extends Error {
  override name = 'NewerDatabaseError'
  constructor(readonly unknown: readonly string[]) {
    super(
      `the database lists ${unknown.length === 1 ? 'a migration' : 'migrations'} this version of the ` +
        `Curriculum API does not know (${unknown.join(', ')}): a newer version migrated it. Nothing was ` +
        'changed. Run the newer version (upgrade the code), or restore a backup taken before that upgrade ' +
        '(docs/operating.md, "Upgrades").',
    )
  }
}

/** True when the migration table exists; asked of the catalog so that no failed statement is needed. */
async function hasMigrationTable(storage: Storage): Promise<boolean> {
  if (storage.engine === 'postgres') {
    const table = `${storage.schema === undefined ? '' : `${storage.schema}.`}${DEFAULT_MIGRATION_TABLE}`
    const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(
      storage.db,
    )
    return rows[0]?.found != null
  }
  const { rows } = await sql<{ name: string }>`select name from sqlite_master
    where type = 'table' and name = ${DEFAULT_MIGRATION_TABLE}`.execute(storage.db)
  return rows.length > 0
}

/** The migrations the database lists, against those this code knows (none listed on a new database). */
export async function migrationState(storage: Storage): Promise<MigrationState> {
  if (!(await hasMigrationTable(storage))) return compareMigrations([])
  const table = storage.schema === undefined ? DEFAULT_MIGRATION_TABLE : `${storage.schema}.${DEFAULT_MIGRATION_TABLE}`
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}
    order by timestamp, name`.execute(storage.db)
  return compareMigrations(rows.map((row) => row.name))
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
  // Also the usual case at start: nothing to apply, so the migrator (its lock table, lock and
  // reads) is not needed.
  const state = await migrationState(storage)
  if (state.unknown.length > 0) throw new NewerDatabaseError(state.unknown)
  if (upTo === undefined && state.pending.length === 0) return { applied: [] }
  if (storage.schema !== undefined) {
    await sql`create schema if not exists ${sql.id(storage.schema)}`.execute(storage.db)
  }
  const provider: MigrationProvider = { getMigrations: async () => migrations(storage, defaults) }
  const migrator = new Migrator({
    db: storage.db,
    provider,
    // Without it Kysely would find another schema's migration tables and skip creating its own.
    ...(storage.schema === undefined ? {} : { migrationTableSchema: storage.schema }),
    // A migration numbered below ones already applied is applied too, not called corrupted:
    // migrations are independent, and a database may have met them in another order.
    allowUnorderedMigrations: true,
  })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo))
    if (error === undefined)
      return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
    // On PostgreSQL the migrations run in one transaction, so a failed run left nothing behind.
    if (!(storage.engine === 'postgres' && vanished(error)) || attempt === MIGRATE_ATTEMPTS)
      throw error instanceof Error ? error : new Error(String(error))
  }
}

const MIGRATE_ATTEMPTS = 5

/**
 * What Kysely's migrator meets on PostgreSQL when another session drops a schema, a table or a
 * column while it lists every table of every schema before it starts: invalid_schema_name,
 * undefined_table, undefined_column, and the internal error of an object gone by its OID. Nothing
 * of ours was touched: run again.
 */
const VANISHED = new Set(['3F000', '42P01', '42703', 'XX000'])

function vanished(error: unknown): boolean {
  return VANISHED.has((error as { code?: string } | undefined)?.code ?? '')
}
