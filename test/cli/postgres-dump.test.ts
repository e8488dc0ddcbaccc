/**
 * On PostgreSQL, `backup` and `restore` do nothing themselves and print the pg_dump and
 * pg_restore commands for the configured database; the docs give the same commands. Here those
 * printed commands are run, as pasted, against the test PostgreSQL: a schema of its own (the
 * `?schema=` form) and a database of its own (the plain form) are dumped, changed or dropped,
 * and restored to exactly what was dumped.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { migrationState } from '../../src/storage/migrate.js'
import { upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'
import { cli, ensureBuilt, jsonOf, ROOT, removeTempDirs, tempDir } from './cli-harness.js'

beforeAll(ensureBuilt)
afterAll(removeTempDirs)

const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? ''
const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const CLEO = '33333333-3333-4333-8333-333333333333'

/** Debian's PostgreSQL binaries, newest version first. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!fs.existsSync(root)) return undefined
  return fs
    .readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(root, version, 'bin'))
    .find((bin) => fs.existsSync(path.join(bin, 'pg_dump')) && fs.existsSync(path.join(bin, 'pg_restore')))
}

const BIN = postgresBin()
const SKIPPED =
  POSTGRES_URL === ''
    ? 'PostgreSQL is not reachable (TEST_POSTGRES_URL)'
    : BIN === undefined
      ? 'pg_dump and pg_restore are not installed (/usr/lib/postgresql/*/bin; apt-get install postgresql-client)'
      : undefined
if (SKIPPED !== undefined) console.warn(`\n[services] ${SKIPPED}: the pg_dump and pg_restore runs are skipped.\n`)

/** What `backup` answers on PostgreSQL: exit 1 and the two commands. */
async function printedCommands(databaseUrl: string, file: string): Promise<{ backup: string; restore: string }> {
  const result = await cli(['backup', file, '--json'], { databaseUrl })
  expect(result.status).toBe(1)
  const { error } = jsonOf(result)
  expect(error.message).toContain("PostgreSQL's own tools (nothing was done)")
  return error.commands
}

/** Runs a printed command as pasted into a shell. */
function paste(command: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', command],
      { cwd: ROOT, env: { PATH: `${BIN}:${process.env.PATH}` }, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr }),
    )
  })
}

async function studentIds(storage: Storage): Promise<string[]> {
  return (await storage.db.selectFrom('students').select('id').orderBy('id').execute()).map((row) => row.id)
}

async function seed(storage: Storage): Promise<void> {
  await createOrganisation(storage.db, 'Acme Learning', Date.now())
  await upsertStudents(
    storage.db,
    [
      { id: ADA, firstName: 'Ada', tier: 'explorer' },
      { id: BEN, firstName: 'Ben', tier: 'builder' },
    ],
    Date.now(),
  )
}

describe('the PostgreSQL commands that backup and restore print', () => {
  it('are the ones the operating guide gives, without the password', async () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/operating.md'), 'utf8')
    const commands = await printedCommands('postgres://api:s3cret@db:5432/curriculum', 'curriculum.dump')
    expect(guide).toContain(commands.backup)
    expect(guide).toContain(commands.restore)
    expect(JSON.stringify(commands)).not.toContain('s3cret')
    const restore = await cli(['restore', 'curriculum.dump'], { databaseUrl: 'postgres://api@db:5432/curriculum' })
    expect(restore.status).toBe(1)
    expect(restore.stderr).toContain(commands.restore)
    const tenant = await printedCommands('postgres://api@db:5432/curriculum?schema=district_a', 'district-a.dump')
    expect(guide).toContain(tenant.backup)
    expect(guide).toContain(tenant.restore)
  })
})

describe.skipIf(SKIPPED !== undefined)(`pg_dump and pg_restore${SKIPPED ? ` (skipped: ${SKIPPED})` : ''}`, () => {
  it('restores a schema of its own to what was dumped, after a change and after a drop', async () => {
    const storage = await createTestStorage({ catalog: false, url: freshDatabaseUrl(POSTGRES_URL) })
    try {
      await seed(storage)
      const databaseUrl = new URL(POSTGRES_URL)
      databaseUrl.searchParams.set('schema', storage.schema!)
      const dump = path.join(tempDir(), 'schema.dump')
      const commands = await printedCommands(databaseUrl.toString(), dump)
      expect(commands.backup).toContain(`--schema=${storage.schema}`)
      const dumped = await paste(commands.backup)
      expect(dumped.status, dumped.output).toBe(0)

      await upsertStudents(storage.db, [{ id: CLEO, firstName: 'Cleo', tier: 'explorer' }], Date.now())
      await storage.db.deleteFrom('students').where('id', '=', ADA).execute()
      const restored = await paste(commands.restore)
      expect(restored.status, restored.output).toBe(0)
      expect(await studentIds(storage)).toEqual([ADA, BEN])

      await sql`drop schema ${sql.id(storage.schema!)} cascade`.execute(storage.db)
      const again = await paste(commands.restore)
      expect(again.status, again.output).toBe(0)
      expect(await studentIds(storage)).toEqual([ADA, BEN])
      expect(await migrationState(storage)).toMatchObject({ pending: [], unknown: [] })
      const dry = await cli(['migrate', '--dry-run'], { databaseUrl: databaseUrl.toString() })
      expect(dry.stdout).toContain('the database is up to date')
    } finally {
      await storage.close()
    }
  }, 120_000)

  it('restores a database of its own (no schema parameter) to what was dumped', async () => {
    const admin = openStorage(POSTGRES_URL)
    const name = `curriculum_dump_${randomBytes(4).toString('hex')}`
    // From template0, which no session ever connects to: a copy of template1 fails while anyone is on it.
    await sql`create database ${sql.id(name)} template template0`.execute(admin.db)
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${name}`
    const storage = await createTestStorage({ catalog: false, url: url.toString() })
    try {
      await seed(storage)
      const dump = path.join(tempDir(), 'database.dump')
      const commands = await printedCommands(url.toString(), dump)
      expect(commands.backup).not.toContain('--schema')
      const dumped = await paste(commands.backup)
      expect(dumped.status, dumped.output).toBe(0)
      await upsertStudents(storage.db, [{ id: CLEO, firstName: 'Cleo', tier: 'explorer' }], Date.now())
      const restored = await paste(commands.restore)
      expect(restored.status, restored.output).toBe(0)
      expect(await studentIds(storage)).toEqual([ADA, BEN])
      expect(await migrationState(storage)).toMatchObject({ pending: [], unknown: [] })
    } finally {
      await storage.close()
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db)
      await admin.close()
    }
  }, 120_000)
})
