/**
 * What the migration table says against what the code knows, on this run's engine: a new
 * database has every migration pending and is left untouched by the question; a database that a
 * newer version migrated is refused by `migrate` (which the server and every command run first),
 * with the unknown migrations named and nothing changed; a migration that landed after others
 * numbered above it (0022-notices after 0024 and 0025) is applied all the same.
 */
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { knownMigrations, migrate, migrationState, NewerDatabaseError } from '../../src/storage/migrate.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'

const FUTURE = ['0900-from-a-newer-version', '0901-also-newer']

function migrationTable(storage: Storage) {
  return sql.table(storage.schema === undefined ? 'kysely_migration' : `${storage.schema}.kysely_migration`)
}

async function listed(storage: Storage): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${migrationTable(storage)} order by name`.execute(
    storage.db,
  )
  return rows.map((row) => row.name)
}

describe('migration state', () => {
  const opened: Storage[] = []
  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close()
  })

  it('lists every migration as pending on a new database, and creates nothing asking', async () => {
    const url = freshDatabaseUrl()
    const storage = openStorage(url)
    opened.push(storage)
    expect(await migrationState(storage)).toEqual({ applied: [], pending: knownMigrations(), unknown: [] })
    const { rows } =
      storage.schema === undefined
        ? await sql`select name from sqlite_master`.execute(storage.db)
        : await sql`select 1 from information_schema.schemata where schema_name = ${storage.schema}`.execute(storage.db)
    expect(rows).toEqual([])
  })

  it('is current once migrated', async () => {
    const storage = await createTestStorage({ catalog: false })
    opened.push(storage)
    expect(await migrationState(storage)).toEqual({ applied: knownMigrations(), pending: [], unknown: [] })
  })

  it('refuses a database a newer version migrated, naming its migrations, and changes nothing', async () => {
    const storage = await createTestStorage({ catalog: false })
    opened.push(storage)
    // Also one migration the code knows, taken out: it is not applied by the refused run.
    const [last] = knownMigrations().slice(-1)
    await sql`delete from ${migrationTable(storage)} where name = ${last}`.execute(storage.db)
    for (const name of FUTURE)
      await sql`insert into ${migrationTable(storage)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        storage.db,
      )
    const before = await listed(storage)
    expect(await migrationState(storage)).toMatchObject({ pending: [last], unknown: FUTURE })

    const refused = await migrate(storage).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(NewerDatabaseError)
    const message = (refused as Error).message
    for (const name of FUTURE) expect(message).toContain(name)
    expect(message).toMatch(/a newer version migrated it/)
    expect(message).toMatch(/upgrade the code\), or restore a backup taken before that upgrade/)
    expect(await listed(storage)).toEqual(before)
  })

  it('applies a known migration that landed after migrations numbered above it were applied', async () => {
    const storage = await createTestStorage({ catalog: false })
    opened.push(storage)
    // A database migrated before 0022-notices was merged, when 0024 and 0025 were the latest.
    await sql`delete from ${migrationTable(storage)} where name = '0022-notices'`.execute(storage.db)
    for (const table of ['notice_opt_outs', 'notices_sent', 'known_devices'])
      await storage.db.schema.dropTable(table).execute()
    expect((await migrationState(storage)).pending).toEqual(['0022-notices'])
    expect(await migrate(storage)).toEqual({ applied: ['0022-notices'] })
    expect(await migrationState(storage)).toMatchObject({ pending: [], unknown: [] })
    expect(await storage.db.selectFrom('notices_sent').selectAll().execute()).toEqual([])
  })
})
