/**
 * The built server refuses to start on a database a newer version migrated: it exits 1 before
 * listening, names the migrations it does not know and says what to do, without a stack trace,
 * and changes nothing. On SQLite, and on PostgreSQL when the test database is there.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { Storage } from '../../src/storage/connection.js'
import { CATALOG_DIR, createTestStorage, freshDatabaseUrl } from '../helper.js'
import { ROOT } from './process.js'

const FUTURE = '0900-from-a-newer-version'
const ENGINES = [
  { engine: 'sqlite', url: () => freshDatabaseUrl('') },
  ...(process.env.TEST_POSTGRES_URL
    ? [{ engine: 'postgres', url: () => freshDatabaseUrl(process.env.TEST_POSTGRES_URL) }]
    : []),
]

function migrationTable(storage: Storage) {
  return sql.table(storage.schema === undefined ? 'kysely_migration' : `${storage.schema}.kysely_migration`)
}

function startServer(databaseUrl: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'dist/server.js')],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, CATALOG_DIR, PORT: '0', HOST: '127.0.0.1' },
        encoding: 'utf8',
        // A server that started would run until killed: it must not.
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ status, output: stdout + stderr })
      },
    )
  })
}

describe.each(ENGINES)('the server on a database newer than its code ($engine)', ({ url }) => {
  it('refuses to start, names the unknown migration, and says to upgrade or restore a backup', async () => {
    const storage = await createTestStorage({ catalog: false, url: url() })
    const databaseUrl =
      storage.schema === undefined
        ? `sqlite:${(await sql<{ file: string }>`pragma database_list`.execute(storage.db)).rows[0]!.file}`
        : postgresUrlWithSchema(storage.schema)
    try {
      await sql`insert into ${migrationTable(storage)} (name, timestamp) values (${FUTURE}, ${new Date().toISOString()})`.execute(
        storage.db,
      )
      const { status, output } = await startServer(databaseUrl)
      expect(status, output).toBe(1)
      expect(output).toContain(`failed to start: the database lists a migration this version`)
      expect(output).toContain(FUTURE)
      expect(output).toMatch(/Run the newer version \(upgrade the code\), or restore a backup/)
      expect(output).not.toMatch(/\n\s+at /)
      expect(output).not.toContain('Server listening')
    } finally {
      await storage.close()
    }
  })
})

/** The test PostgreSQL database's URL with `schema` selected. */
function postgresUrlWithSchema(schema: string): string {
  const url = new URL(process.env.TEST_POSTGRES_URL!)
  url.searchParams.set('schema', schema)
  return url.toString()
}
