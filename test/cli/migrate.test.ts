/**
 * `curriculum migrate --dry-run` lists the pending migrations and changes nothing (no schema
 * change, no audit row, not even a new SQLite file); every command refuses a database that a
 * newer version migrated, naming what it does not know. On SQLite, and on PostgreSQL when the
 * test database is there.
 */
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { knownMigrations } from '../../src/storage/migrate.js'
import { freshDatabaseUrl, migrateBesideOtherTests } from '../helper.js'
import { cli, jsonOf, tempDir, useCliHarness } from './cli-harness.js'

useCliHarness()

const ENGINES = [
  { engine: 'sqlite', url: () => `sqlite:${path.join(tempDir(), 'cli.db')}` },
  ...(process.env.TEST_POSTGRES_URL
    ? [{ engine: 'postgres', url: () => freshDatabaseUrl(process.env.TEST_POSTGRES_URL) }]
    : []),
]
const FUTURE = '0900-from-a-newer-version'

/** Opens `url`, migrated up to `upTo`; closing it drops a PostgreSQL test schema. */
async function databaseAt(url: string, upTo: string): Promise<Storage> {
  const storage = openStorage(url, { busyTimeoutMs: 5000 })
  await migrateBesideOtherTests(storage, upTo)
  return {
    ...storage,
    async close() {
      if (storage.schema !== undefined)
        await sql`drop schema if exists ${sql.id(storage.schema)} cascade`.execute(storage.db).catch(() => {})
      await storage.close()
    },
  }
}

function table(storage: Storage, name: string) {
  return sql.table(storage.schema === undefined ? name : `${storage.schema}.${name}`)
}

async function listed(storage: Storage): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${table(storage, 'kysely_migration')}
    order by name`.execute(storage.db)
  return rows.map((row) => row.name)
}

async function auditRows(storage: Storage): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${table(storage, 'audit_log')}`.execute(
    storage.db,
  )
  return Number(rows[0]!.n)
}

describe('migrate --dry-run on a SQLite file that does not exist', () => {
  it('lists every migration as pending and creates no file', async () => {
    const file = path.join(tempDir(), 'absent.db')
    const result = await cli(['migrate', '--dry-run', '--json'], { databaseUrl: `sqlite:${file}` })
    expect(result.status, result.stderr).toBe(0)
    expect(jsonOf(result)).toEqual({ ok: true, dryRun: true, pending: knownMigrations(), applied: [] })
    expect(fs.existsSync(file)).toBe(false)
  })
})

describe.each(ENGINES)('migrations from the command line ($engine)', ({ url }) => {
  it('lists the pending migrations without applying them or writing an audit row; migrate then applies them', async () => {
    const known = knownMigrations()
    const upTo = known[known.length - 3]!
    const databaseUrl = url()
    const storage = await databaseAt(databaseUrl, upTo)
    try {
      const before = { migrations: await listed(storage), audit: await auditRows(storage) }
      const dry = await cli(['migrate', '--dry-run'], { databaseUrl })
      expect(dry.status, dry.stderr).toBe(0)
      expect(dry.stdout).toContain('2 pending migrations (nothing was changed')
      for (const name of known.slice(-2)) expect(dry.stdout).toContain(`  ${name}\n`)
      const json = jsonOf(await cli(['migrate', '--dry-run', '--json'], { databaseUrl }))
      expect(json).toMatchObject({ ok: true, dryRun: true, pending: known.slice(-2) })
      expect({ migrations: await listed(storage), audit: await auditRows(storage) }).toEqual(before)

      const applied = await cli(['migrate', '--json'], { databaseUrl })
      expect(jsonOf(applied)).toEqual({ ok: true, applied: known.slice(-2) })
      const after = await cli(['migrate', '--dry-run'], { databaseUrl })
      expect(after.stdout).toContain(`the database is up to date (${known.length} migrations applied)`)
    } finally {
      await storage.close()
    }
  })

  it('refuses, in every command, a database a newer version migrated', async () => {
    const known = knownMigrations()
    const databaseUrl = url()
    const storage = await databaseAt(databaseUrl, known[known.length - 1]!)
    try {
      await sql`insert into ${table(storage, 'kysely_migration')} (name, timestamp)
        values (${FUTURE}, ${new Date().toISOString()})`.execute(storage.db)
      const before = { migrations: await listed(storage), audit: await auditRows(storage) }
      for (const argv of [['migrate', '--dry-run'], ['migrate'], ['org', 'list']]) {
        const result = await cli(argv, { databaseUrl })
        expect(result.status, argv.join(' ')).toBe(1)
        expect(result.stderr, argv.join(' ')).toContain(`error: the database lists a migration this version`)
        expect(result.stderr).toContain(`(${FUTURE})`)
        expect(result.stderr).toMatch(/upgrade the code\), or restore a backup taken before that upgrade/)
      }
      const json = jsonOf(await cli(['org', 'list', '--json'], { databaseUrl }))
      expect(json.ok).toBe(false)
      expect(json.error.message).toContain(FUTURE)
      expect({ migrations: await listed(storage), audit: await auditRows(storage) }).toEqual(before)
    } finally {
      await storage.close()
    }
  })
})
