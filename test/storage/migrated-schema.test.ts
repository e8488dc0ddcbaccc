/**
 * On PostgreSQL, a test's schema is made from a script dumped from one migrated schema
 * (test/support/migrated-schema.ts). Held here: what the script makes is what the migrations
 * make, object by object, and it counts as migrated.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { Storage } from '../../src/storage/connection.js'
import { readCatalog, replaceCatalog } from '../../src/storage/catalog-repository.js'
import { migrationState } from '../../src/storage/migrate.js'
import {
  createTestStorage,
  freshDatabaseUrl,
  loadSampleCatalog,
  migrateBesideOtherTests,
  openTestStorage,
} from '../helper.js'
import { postgresBin } from '../support/postgres-bin.js'

const POSTGRES = process.env.TEST_DATABASE_URL
const BIN = postgresBin()

/** The schema's objects as pg_dump writes them, its name replaced, with no rows. */
async function schemaText(storage: Storage): Promise<string> {
  const database = new URL(POSTGRES!)
  database.searchParams.delete('schema')
  const { stdout } = await promisify(execFile)(path.join(BIN!, 'pg_dump'), [
    `--dbname=${database}`,
    `--schema=${storage.schema}`,
    '--schema-only',
    '--no-owner',
    '--no-privileges',
  ])
  return stdout
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n')
    .replaceAll(storage.schema!, 'the_schema')
}

describe.runIf(POSTGRES !== undefined && BIN !== undefined)('a test schema made from the migrated script', () => {
  it('holds every object the migrations make, and every migration counts as applied', async () => {
    const migrated = openTestStorage(freshDatabaseUrl())
    const replayed = await createTestStorage({ catalog: false })
    try {
      await migrateBesideOtherTests(migrated)
      const expected = await schemaText(migrated)
      expect(expected).toContain('CREATE TABLE the_schema.students')
      expect(await schemaText(replayed)).toBe(expected)
      expect(await migrationState(replayed)).toEqual(await migrationState(migrated))
      expect((await migrationState(replayed)).pending).toEqual([])
    } finally {
      await migrated.close()
      await replayed.close()
    }
  })

  it('with the catalog, holds the sample catalog as storing it holds it', async () => {
    const stored = await createTestStorage({ catalog: false })
    const replayed = await createTestStorage()
    try {
      await replaceCatalog(stored.db, loadSampleCatalog())
      const expected = await readCatalog(stored.db)
      expect(expected.lessons.length).toBeGreaterThan(0)
      expect(await readCatalog(replayed.db)).toEqual(expected)
      expect(await schemaText(replayed)).toBe(await schemaText(stored))
    } finally {
      await stored.close()
      await replayed.close()
    }
  })
})
