/**
 * Test support: a real database (SQLite in a temp file by default), the real catalog, a
 * manual clock, and fixtures covering every kind of key a partner can hold.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { expect } from 'vitest'
import { type AppOptions, buildApp } from '../src/app.js'
import { readCatalogDir, type CatalogData } from '../src/catalog/catalog-files.js'
import { ManualClock } from '../src/clock.js'
import { type Config, loadConfig } from '../src/config.js'
import type { Scope } from '../src/domain/scopes.js'
import type { TypedApp } from '../src/http/app-types.js'
import { createApiKey, createOrganisation, revokeApiKey } from '../src/storage/access-repository.js'
import { recordAgreement } from '../src/cases/agreement-record.js'
import { replaceCatalog } from '../src/storage/catalog-repository.js'
import { openStorage, type Storage } from '../src/storage/connection.js'
import type { SqliteStorage } from '../src/storage/sqlite/open-sqlite.js'
import { type MigrationDefaults, migrate } from '../src/storage/migrate.js'
import { linkStudents, upsertProgress, upsertStudents } from '../src/storage/student-import-repository.js'
import { Contract, documentedPath } from './contract.js'
import { HttpClient, type HttpRequest, type HttpResponse } from './support/http-client.js'
import { migratedSchemaScript, replaySchema } from './support/migrated-schema.js'

export const CATALOG_DIR = path.resolve(import.meta.dirname, '../catalog')

let sampleCatalog: CatalogData | undefined
export function loadSampleCatalog(): CatalogData {
  if (sampleCatalog === undefined) {
    const result = readCatalogDir(CATALOG_DIR)
    if (!result.ok) throw new Error(`sample catalog invalid: ${JSON.stringify(result.problems)}`)
    sampleCatalog = result.catalog
  }
  return sampleCatalog
}

export function tempDir(prefix = 'curriculum-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/**
 * A new, empty database's URL: a SQLite file in a temp folder, or, when TEST_DATABASE_URL names
 * a PostgreSQL database, a schema of its own there so that runs never collide.
 */
export function freshDatabaseUrl(base = process.env.TEST_DATABASE_URL): string {
  if (base !== undefined && /^postgres(ql)?:\/\//.test(base)) {
    const url = new URL(base)
    url.searchParams.set('schema', `t_${randomBytes(6).toString('hex')}`)
    return url.toString()
  }
  return `sqlite:${path.join(tempDir(), 'test.db')}`
}

/**
 * A database opened and not migrated (for tests that migrate it step by step); on PostgreSQL,
 * closing it drops the test's schema.
 */
export function openTestStorage(url = freshDatabaseUrl(), options: Parameters<typeof openStorage>[1] = {}): Storage {
  const opened = openStorage(url, options)
  if (opened.schema === undefined) return opened
  return {
    ...opened,
    async close() {
      await sql`drop schema if exists ${sql.id(opened.schema!)} cascade`.execute(opened.db).catch(() => {})
      await opened.close()
    },
  }
}

/** A migrated database with the sample catalog. */
export async function createTestStorage(
  options: { catalog?: boolean; url?: string; mmapBytes?: number; busyTimeoutMs?: number; beginWaitMs?: number } = {},
): Promise<Storage> {
  const url = options.url ?? freshDatabaseUrl()
  const storage = openTestStorage(url, {
    busyTimeoutMs: options.busyTimeoutMs ?? 1000,
    ...(options.beginWaitMs === undefined ? {} : { beginWaitMs: options.beginWaitMs }),
    ...(options.mmapBytes === undefined ? {} : { mmapBytes: options.mmapBytes }),
  })
  await migrateTestStorage(storage, url, options.catalog !== false)
  return storage
}

/**
 * Migrates `storage` (opened on `url`), with the catalog if asked. A new PostgreSQL schema gets
 * this worker's dump of a migrated one replayed instead, which takes a fraction of the time.
 */
export async function migrateTestStorage(storage: Storage, url: string, catalog: boolean): Promise<void> {
  // A schema already there (a second instance's storage on the first one's URL) is only migrated.
  const made =
    storage.schema === undefined || (await schemaExists(storage))
      ? undefined
      : await migratedSchemaScript(url, catalog, (database) => migratedTemplate(database, catalog))
  if (made !== undefined) return replaySchema(storage, made)
  await migrateBesideOtherTests(storage)
  if (catalog) await replaceCatalog(storage.db, loadSampleCatalog())
}

async function schemaExists(storage: Storage): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${storage.schema!}`.execute(storage.db)
  return rows.length > 0
}

/** A PostgreSQL schema of its own, migrated, with the catalog if asked: what support/migrated-schema.ts dumps once per worker. */
async function migratedTemplate(database: string, catalog: boolean): Promise<Storage> {
  const storage = openTestStorage(freshDatabaseUrl(database))
  await migrateBesideOtherTests(storage)
  if (catalog) await replaceCatalog(storage.db, loadSampleCatalog())
  return storage
}

/** `storage` as SQLite opened it, with its raw connections, for the tests of SQLite's own machinery. */
export function sqliteOf(storage: Storage): SqliteStorage {
  if (!isSqliteStorage(storage)) throw new Error(`a test of SQLite's machinery ran on ${storage.engine}`)
  return storage
}

function isSqliteStorage(storage: Storage): storage is SqliteStorage {
  return 'readConnection' in storage
}

/**
 * Kysely's migrator looks for its tables by reading every table of the database, so on
 * PostgreSQL a test file dropping its own schema at that moment can fail another file's
 * migration with "schema ... does not exist" (3F000) naming the dropped schema, or with
 * `column "mode" of relation "api_keys" does not exist` (42703; "relation ... does not exist",
 * 42P01, alike) when that read looks up a column of a table being dropped meanwhile. Those races
 * exist only between test files sharing one database; try again (a migration of our own that
 * fails so fails every attempt).
 */
const OTHER_SCHEMA_RACES = new Set(['3F000', '42703', '42P01'])

export async function migrateBesideOtherTests(
  storage: Storage,
  upTo?: string,
  defaults?: MigrationDefaults,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrate(storage, upTo, defaults)
      return
    } catch (error) {
      const otherSchemaChanging =
        OTHER_SCHEMA_RACES.has(String((error as { code?: string }).code)) &&
        !String((error as Error).message).includes(`"${storage.schema}"`)
      if (!otherSchemaChanging || attempt >= 5) throw error
    }
  }
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ SEED_DEMO: 'false', CATALOG_DIR, ...overrides })
}

export const START = Date.parse('2026-03-02T09:00:00.000Z')
const HOUR = 3_600_000
const DAY = 24 * HOUR

export const STUDENTS = {
  ada: '11111111-1111-4111-8111-111111111111',
  ben: '22222222-2222-4222-8222-222222222222',
  cleo: '33333333-3333-4333-8333-333333333333',
  dev: '44444444-4444-4444-8444-444444444444',
  /** A well-formed id no student has. */
  nobody: '99999999-9999-4999-8999-999999999999',
} as const

export interface Fixtures {
  orgs: { acme: string; beta: string; gamma: string }
  keys: {
    catalog: string
    read: string
    write: string
    readWrite: string
    expired: string
    revoked: string
    noAgreement: string
    otherOrg: string
  }
  keyIds: Record<keyof Fixtures['keys'], string>
}

/**
 * Acme (agreement) holds most keys and students Ada, Ben, Dev; Beta (agreement) holds Ben and
 * Cleo; Gamma has no agreement.
 */
export async function seedFixtures(storage: Storage, now: number): Promise<Fixtures> {
  const { db } = storage
  const acme = await createOrganisation(db, 'Acme Learning', now)
  const beta = await createOrganisation(db, 'Beta Tutors', now)
  const gamma = await createOrganisation(db, 'Gamma Apps', now)
  for (const org of [acme, beta]) {
    await recordAgreement(
      db,
      { organisationId: org.id, signedAt: now - 30 * DAY, expiresAt: now + 365 * DAY, documentRef: `DSA-${org.name}` },
      now,
    )
  }
  const key = async (
    organisationId: string,
    name: string,
    scopes: Scope[],
    at = now,
    expiresAt: number | null = null,
  ) => createApiKey(db, { organisationId, name, scopes, expiresAt }, at)
  const both: Scope[] = ['students:read', 'students:write']
  const made = {
    catalog: await key(acme.id, 'catalog', []),
    read: await key(acme.id, 'read', ['students:read']),
    write: await key(acme.id, 'write', ['students:write']),
    readWrite: await key(acme.id, 'read-write', both),
    expired: await key(acme.id, 'expired', both, now - 2 * HOUR, now - HOUR),
    revoked: await key(acme.id, 'revoked', both),
    noAgreement: await key(gamma.id, 'no agreement', both),
    otherOrg: await key(beta.id, 'other org', both),
  }
  await revokeApiKey(db, made.revoked.row.id, now)

  await upsertStudents(
    db,
    [
      { id: STUDENTS.ada, firstName: 'Ada', tier: 'explorer' },
      { id: STUDENTS.ben, firstName: 'Ben', tier: 'builder' },
      { id: STUDENTS.cleo, firstName: 'Cleo', tier: 'innovator' },
      { id: STUDENTS.dev, firstName: 'Dev', tier: 'explorer' },
    ],
    now - 10 * DAY,
  )
  await linkStudents(
    db,
    [
      { studentId: STUDENTS.ada, organisationId: acme.id },
      { studentId: STUDENTS.ben, organisationId: acme.id },
      { studentId: STUDENTS.dev, organisationId: acme.id },
      { studentId: STUDENTS.ben, organisationId: beta.id },
      { studentId: STUDENTS.cleo, organisationId: beta.id },
    ],
    now,
  )
  const t = (days: number) => new Date(now - days * DAY).toISOString()
  await upsertProgress(
    db,
    [
      // Out of catalog order on purpose; one lesson of another tier; one lesson no longer in the catalog.
      {
        studentId: STUDENTS.ada,
        lessonSlug: 'explorer/e2-steps-in-order',
        status: 'in_progress',
        xp: 20,
        timeSeconds: 300,
        startedAt: t(2),
        completedAt: null,
      },
      {
        studentId: STUDENTS.ada,
        lessonSlug: 'explorer/e1-robots-follow-instructions',
        status: 'completed',
        xp: 100,
        timeSeconds: 900,
        startedAt: t(5),
        completedAt: t(4),
      },
      {
        studentId: STUDENTS.ada,
        lessonSlug: 'builder/b1-what-is-an-algorithm',
        status: 'completed',
        xp: 120,
        timeSeconds: 1200,
        startedAt: t(3),
        completedAt: t(3),
      },
      {
        studentId: STUDENTS.ada,
        lessonSlug: 'explorer/e99-retired-lesson',
        status: 'completed',
        xp: 10,
        timeSeconds: 60,
        startedAt: t(9),
        completedAt: t(8),
      },
      {
        studentId: STUDENTS.ben,
        lessonSlug: 'builder/b2-loops-save-time',
        status: 'completed',
        xp: 80,
        timeSeconds: 700,
        startedAt: t(6),
        completedAt: t(5),
      },
      {
        studentId: STUDENTS.cleo,
        lessonSlug: 'innovator/i1-hello-python',
        status: 'in_progress',
        xp: 5,
        timeSeconds: 100,
        startedAt: t(1),
        completedAt: null,
      },
    ],
    now,
  )
  const keys = Object.fromEntries(Object.entries(made).map(([name, value]) => [name, value.key])) as Fixtures['keys']
  const keyIds = Object.fromEntries(
    Object.entries(made).map(([name, value]) => [name, value.row.id]),
  ) as Fixtures['keyIds']
  return { orgs: { acme: acme.id, beta: beta.id, gamma: gamma.id }, keys, keyIds }
}

/**
 * The request path this run's HTTP tests take (env TEST_REQUEST_PATH): `fast`, the default, with
 * the fast path answering what it can before the router; `plain`, the router alone. vitest.config.ts
 * runs the HTTP suites once each way.
 */
export type RequestPath = 'fast' | 'plain'
export const REQUEST_PATH: RequestPath = requestPathFrom(process.env.TEST_REQUEST_PATH)

function requestPathFrom(value: string | undefined): RequestPath {
  if (value === undefined || value === '' || value === 'fast') return 'fast'
  if (value === 'plain') return 'plain'
  throw new Error(`TEST_REQUEST_PATH is ${JSON.stringify(value)}: fast or plain`)
}

/**
 * `options` for buildApp with the request path set (this run's unless `path` names one): the one
 * place that knows how the switch is spelled.
 */
export function requestPathOptions(options: AppOptions, path: RequestPath = REQUEST_PATH): AppOptions {
  return { ...options, config: { ...options.config, fastPath: path === 'fast' ? 'auto' : 'off' } }
}

export interface ListeningApp {
  app: TypedApp
  /** Where the app listens: http://127.0.0.1:<port>. */
  base: string
  /** A keep-alive client for it. */
  client: HttpClient
  /** Closes the client and the app (not its storage). */
  close(): Promise<void>
}

/** buildApp on this run's request path (or `path`), listening on 127.0.0.1, with a client. */
export async function listeningApp(options: AppOptions, path?: RequestPath): Promise<ListeningApp> {
  const app = await buildApp(requestPathOptions(options, path))
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new HttpClient(base)
  return {
    app,
    base,
    client,
    async close() {
      client.close()
      await app.close()
    },
  }
}

/**
 * The app listening on a fresh database whose ping never answers, with a 100 ms storage
 * timeout: what readiness answers while storage hangs. Closing it closes the database too.
 */
export async function listeningOnHangingStorage(options: Partial<AppOptions> = {}): Promise<ListeningApp> {
  const storage = await createTestStorage()
  const hanging = { ...storage, ping: () => new Promise<void>(() => {}) }
  const server = await listeningApp({
    config: testConfig({ STORAGE_TIMEOUT_MS: '100' }),
    storage: hanging,
    clock: new ManualClock(START),
    logger: false,
    ...options,
  })
  return {
    ...server,
    async close() {
      await server.close()
      await storage.close()
    },
  }
}

export interface TestContext {
  app: TypedApp
  /** Where the app listens: http://127.0.0.1:<port>. */
  base: string
  contract: Contract
  /** A request over a real socket, its response checked against the served OpenAPI document. */
  call(options: HttpRequest): Promise<HttpResponse>
  /** A request over a real socket, unchecked (for tests that check what they expect themselves). */
  send(options: HttpRequest): Promise<HttpResponse>
  /** How many responses the router (Fastify) has sent; the fast path's answers are not counted. */
  readonly routed: number
  storage: Storage
  clock: ManualClock
  fixtures: Fixtures
  close(): Promise<void>
}

/**
 * The app on a fresh database with the fixtures, listening on 127.0.0.1 on this run's request
 * path, and a keep-alive client for it.
 */
export async function buildTestApp(
  options: { env?: Record<string, string>; deprecations?: AppOptions['deprecations'] } = {},
): Promise<TestContext> {
  const clock = new ManualClock(START)
  const storage = await createTestStorage()
  const fixtures = await seedFixtures(storage, clock.now())
  const { deprecations } = options
  // No background poll: a test sees changes made elsewhere when it calls changes.check().
  const app = await buildApp(
    requestPathOptions({
      config: testConfig(options.env),
      storage,
      clock,
      logger: false,
      pollChanges: false,
      ...(deprecations === undefined ? {} : { deprecations }),
    }),
  )
  let routed = 0
  app.addHook('onResponse', (_request, _reply, done) => {
    routed++
    done()
  })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new HttpClient(base)
  const contract = new Contract(app.swagger() as Record<string, unknown>)
  return {
    app,
    base,
    contract,
    async call(request) {
      const response = await client.request(request)
      const method = (request.method ?? 'GET').toUpperCase()
      const path = documentedPath(String(request.url ?? '/'))
      const documented = path !== undefined && contract.doc.paths?.[path]?.[method.toLowerCase()] !== undefined
      if (documented) contract.check(method, path, response)
      else if (response.statusCode >= 400 && method !== 'HEAD') contract.checkProblem(response)
      return response
    },
    send: (request) => client.request(request),
    get routed() {
      return routed
    },
    storage,
    clock,
    fixtures,
    async close() {
      client.close()
      await app.close()
      await storage.close()
    },
  }
}

export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}

/** The fixture keys every student read refuses, and the code each gets: no scope (two kinds), no agreement. */
export function keysWithoutAccess(fixtures: Fixtures): [key: string, code: string][] {
  return [
    [fixtures.keys.catalog, 'insufficient_scope'],
    [fixtures.keys.write, 'insufficient_scope'],
    [fixtures.keys.noAgreement, 'agreement_required'],
  ]
}

/** GETs `url` with each key and expects the problem code paired with it. */
export async function expectRefusals(
  t: TestContext,
  url: string,
  cases: readonly (readonly [string, string])[],
): Promise<void> {
  for (const [key, code] of cases) {
    const res = await t.call({ url, headers: bearer(key) })
    expect(res.json().code, code).toBe(code)
  }
}

/** New students on the explorer tier, each named `firstName`, linked to the organisation. */
export async function addLinkedStudents(
  db: Storage['db'],
  ids: readonly string[],
  organisationId: string,
  firstName: string,
  at: number,
): Promise<void> {
  await upsertStudents(
    db,
    ids.map((id) => ({ id, firstName, tier: 'explorer' as const })),
    at,
  )
  await linkStudents(
    db,
    ids.map((studentId) => ({ studentId, organisationId })),
    at,
  )
}

/**
 * Links written straight into the table, past the guard of `linkStudents` that refuses a real
 * student in a sandbox or a sandbox student in a partner organisation: the state a database
 * written before that guard may hold, which reads must still never show.
 */
export async function linkPastTheGuard(
  db: Storage['db'],
  rows: readonly { studentId: string; organisationId: string }[],
  now: number,
): Promise<void> {
  const created_at = new Date(now).toISOString()
  await db
    .insertInto('student_organisations')
    .values(rows.map((row) => ({ student_id: row.studentId, organisation_id: row.organisationId, created_at })))
    .execute()
}
