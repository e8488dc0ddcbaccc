/**
 * The same dataset in PostgreSQL, for the WORKERS=2 + Redis scenarios: schema `bench_curriculum`
 * of the `test` database, created by the service's migrations and catalog import, then filled
 * from the SQLite dataset with COPY (postgres-copy.mjs), so both engines serve identical rows
 * and the same keys.
 *
 * By default the schema is dropped after the run. BENCH_KEEP_POSTGRES=1 keeps it, with the
 * SQLite manifest in `bench_curriculum.bench_manifest`, and a later run reuses it when the
 * manifest still matches (same dataset id and migrations).
 */
import pg from 'pg'
import { Redis } from 'ioredis'
import { CATALOG_DIR, importDist } from './paths.mjs'
import { copyRows } from './postgres-copy.mjs'
import { openDatasetReadOnly } from './sqlite-dataset.mjs'

export const SCHEMA = 'bench_curriculum'
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Parents before children, for the foreign keys. */
const TABLES = ['organisations', 'agreements', 'api_keys', 'students', 'student_organisations', 'progress']

export function postgresServiceUrl() {
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('schema', SCHEMA)
  return url.toString()
}

/** Why PostgreSQL or Redis cannot be used, or undefined when both answer. */
export async function unavailableReason() {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    return `PostgreSQL at ${POSTGRES_URL} does not answer (${error.message})`
  } finally {
    await client.end().catch(() => {})
  }
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    return `Redis at ${REDIS_URL} does not answer (${error.message})`
  } finally {
    redis.disconnect()
  }
  return undefined
}

async function storedManifest(client) {
  try {
    const result = await client.query(`select value from "${SCHEMA}".bench_manifest`)
    return JSON.parse(result.rows[0]?.value ?? 'null')
  } catch {
    return undefined
  }
}

/**
 * Loads the SQLite dataset (`files`, `manifest` from ensureSqliteDataset) into the schema, or
 * reuses a kept one. Returns the service DATABASE_URL and how long loading took.
 */
export async function ensurePostgresDataset(files, manifest, { keep, log = console.log }) {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    const stored = keep ? await storedManifest(client) : undefined
    if (stored?.datasetId === manifest.datasetId && stored?.migrations === manifest.migrations) {
      await emptyDisclosureLog(client)
      return { url: postgresServiceUrl(), seconds: 0, reused: true }
    }
    const started = performance.now()
    await client.query(`drop schema if exists "${SCHEMA}" cascade`)
    await migrateAndImportCatalog()
    const sqlite = openDatasetReadOnly(files.database)
    try {
      // The rows come consistent from SQLite; per-row foreign-key triggers would double the
      // load time. `replica` skips them for this session only; it needs a superuser, and without
      // one the load is just slower.
      await client.query(`set session_replication_role = replica`).catch(() => {})
      for (const table of TABLES) {
        const rows = await copyTable(client, sqlite, table)
        log(`  ${table}: ${rows.toLocaleString('en')} rows`)
      }
    } finally {
      sqlite.close()
    }
    await client.query(`update "${SCHEMA}".meta set version = version + 1 where name = 'access'`)
    await client.query(`set session_replication_role = default`).catch(() => {})
    for (const table of TABLES) await client.query(`analyze "${SCHEMA}"."${table}"`)
    if (keep) {
      await client.query(`create table "${SCHEMA}".bench_manifest (value text not null)`)
      await client.query(`insert into "${SCHEMA}".bench_manifest values ($1)`, [JSON.stringify(manifest)])
    }
    return { url: postgresServiceUrl(), seconds: (performance.now() - started) / 1000, reused: false }
  } finally {
    await client.end()
  }
}

/** The disclosure log emptied, with the segments and lookups sealed over it (a new client unless given one). */
export async function emptyDisclosureLog(given) {
  const client = given ?? new pg.Client({ connectionString: POSTGRES_URL })
  if (given === undefined) await client.connect()
  try {
    await client.query(
      `truncate "${SCHEMA}".disclosures, "${SCHEMA}".disclosure_lookup, "${SCHEMA}".disclosure_segments`,
    )
  } finally {
    if (given === undefined) await client.end()
  }
}

async function migrateAndImportCatalog() {
  const { openStorage } = await importDist('storage/connection.js')
  const { migrate } = await importDist('storage/migrate.js')
  const { readCatalogDir } = await importDist('catalog/catalog-files.js')
  const { replaceCatalog } = await importDist('storage/catalog-repository.js')
  const storage = openStorage(postgresServiceUrl())
  try {
    await migrate(storage)
    const read = readCatalogDir(CATALOG_DIR)
    if (!read.ok) throw new Error('the sample catalog is invalid')
    await replaceCatalog(storage.db, read.catalog)
  } finally {
    await storage.close()
  }
}

async function copyTable(client, sqlite, table) {
  const columns = sqlite.prepare(`select name from pragma_table_info(?) order by cid`).pluck().all(table)
  const rows = sqlite
    .prepare(`select ${columns.map((c) => `"${c}"`).join(',')} from "${table}"`)
    .raw()
    .iterate()
  return copyRows(client, `"${SCHEMA}"."${table}"`, columns, rows)
}

export async function dropPostgresDataset() {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(`drop schema if exists "${SCHEMA}" cascade`)
  } finally {
    await client.end()
  }
}

/** Deletes every Redis key under `prefix` (this run's rate-limit windows). */
export async function clearRedisPrefix(prefix) {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  let deleted = 0
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) deleted += await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
  return deleted
}
