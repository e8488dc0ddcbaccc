/**
 * On PostgreSQL, `backup` and `restore` do nothing themselves and print the pg_dump and
 * pg_restore commands for the configured database; the docs give the same commands. Here those
 * printed commands are run, as pasted, against the test PostgreSQL: a schema of its own (the
 * `?schema=` form) and a database of its own (the plain form) are dumped, changed or dropped,
 * and restored to exactly what was dumped. A dump holding schema objects the migrations do not
 * make is refused by `backup --verify` and `restore`; and a signing key the dump lacks is kept by
 * the commands `restore` prints.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { verifyCertificate } from '../../src/domain/deletion-certificate.js'
import { keySet, loadSigningKey } from '../../src/services/signing-keys.js'
import { createOrganisation } from '../../src/storage/access-repository.js'
import { endAgreements } from '../../src/cases/agreement-end.js'
import { recordAgreement } from '../../src/cases/agreement-record.js'
import { disposeDueAgreements } from '../../src/cases/agreement-disposition.js'
import { openStorage, type Storage } from '../../src/storage/connection.js'
import { migrationState } from '../../src/storage/migrate.js'
import { earlierSigningKeys } from '../../src/storage/signing-key-repository.js'
import { linkStudents, upsertStudents } from '../../src/storage/student-import-repository.js'
import { createTestStorage, freshDatabaseUrl } from '../helper.js'
import { postgresBin } from '../support/postgres-bin.js'
import { cli, jsonOf, ROOT, tempDir, useCliHarness } from './cli-harness.js'

useCliHarness()

const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? ''
const ADA = '11111111-1111-4111-8111-111111111111'
const BEN = '22222222-2222-4222-8222-222222222222'
const CLEO = '33333333-3333-4333-8333-333333333333'

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
  it('are the ones the backup and restore guide gives, without the password', async () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/backup-and-restore.md'), 'utf8')
    const commands = await printedCommands('postgres://api:s3cret@db:5432/curriculum', 'curriculum.dump')
    expect(guide).toContain(commands.backup)
    expect(guide).toContain(commands.restore)
    expect(JSON.stringify(commands)).not.toContain('s3cret')
    // `restore` gives the command only for a dump it has read and checked.
    const restore = await cli(['restore', 'curriculum.dump'], { databaseUrl: 'postgres://api@db:5432/curriculum' })
    expect(restore.status).toBe(1)
    expect(restore.stderr).toContain('curriculum.dump: cannot read it')
    expect(restore.stderr).not.toContain('pg_restore --clean')
    const tenant = await printedCommands('postgres://api@db:5432/curriculum?schema=district_a', 'district-a.dump')
    expect(guide).toContain(tenant.backup)
    expect(guide).toContain(tenant.restore)
  })
})

/** The CLI with pg_dump and pg_restore on its PATH. */
const withTools = { PATH: `${BIN}:${process.env.PATH}` }

/**
 * Schema objects a dump could be given, each with the statements that add it and take it away
 * again, and how the refusal names what it adds or changes.
 */
const PLANTED: [string, (schema: string) => string[], (schema: string) => string[], string[]][] = [
  [
    'a trigger that deletes every disclosure row as it is written',
    (s) => [
      `create function ${s}.forget() returns trigger language plpgsql as
        $$ begin delete from ${s}.disclosures where id = new.id; return null; end $$`,
      `create trigger forget after insert on ${s}.disclosures for each row execute function ${s}.forget()`,
    ],
    (s) => [`drop function ${s}.forget() cascade`],
    ['extra FUNCTION forget()', 'extra TRIGGER disclosures forget'],
  ],
  [
    'a view of first names',
    (s) => [`create view ${s}.names as select id, first_name from ${s}.students`],
    (s) => [`drop view ${s}.names`],
    ['extra VIEW names'],
  ],
  [
    'an index',
    (s) => [`create index students_first_name on ${s}.students (first_name)`],
    (s) => [`drop index ${s}.students_first_name`],
    ['extra INDEX students_first_name'],
  ],
  [
    'a column added to a table',
    (s) => [`alter table ${s}.students add column notes text`],
    (s) => [`alter table ${s}.students drop column notes`],
    ['changed TABLE students', 'changed TABLE DATA students'],
  ],
]

async function run(storage: Storage, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(storage.db)
}

/** Objects of the schema that are not tables, and scratch schemas left behind. */
async function strayObjects(storage: Storage): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select 'function ' || proname as name from pg_proc where pronamespace = ${storage.schema!}::regnamespace
    union all select 'view ' || viewname from pg_views where schemaname = ${storage.schema!}
    union all select 'trigger ' || tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = ${storage.schema!}::regnamespace and not t.tgisinternal
    union all select 'index ' || indexname from pg_indexes where schemaname = ${storage.schema!}
      and indexname = 'students_first_name'
    union all select 'column notes' from information_schema.columns where table_schema = ${storage.schema!}
      and column_name = 'notes'
    union all select 'schema ' || nspname from pg_namespace where nspname like 'curriculum\_verify\_%'`.execute(
    storage.db,
  )
  return rows.map((row) => row.name)
}

describe.skipIf(SKIPPED !== undefined)(
  `a dump holding schema objects of its own${SKIPPED ? ` (skipped: ${SKIPPED})` : ''}`,
  () => {
    it('is refused by backup --verify and restore, each object named, and the database is left as it was', async () => {
      const storage = await createTestStorage({ catalog: false, url: freshDatabaseUrl(POSTGRES_URL) })
      try {
        await seed(storage)
        const databaseUrl = new URL(POSTGRES_URL)
        databaseUrl.searchParams.set('schema', storage.schema!)
        const url = databaseUrl.toString()
        const dir = tempDir()
        // Every object at once: a dump taken while the database held them all, then each taken away again.
        const dump = path.join(dir, 'planted.dump')
        for (const [, plant] of PLANTED) await run(storage, plant(storage.schema!))
        const dumped = await paste((await printedCommands(url, dump)).backup)
        for (const [, , undo] of PLANTED) await run(storage, undo(storage.schema!))
        expect(dumped.status, dumped.output).toBe(0)
        const named = PLANTED.flatMap(([, , , names]) => names)

        const verified = await cli(['backup', '--verify', dump, '--json'], { databaseUrl: url, env: withTools })
        expect(verified.status).toBe(1)
        const { error } = jsonOf(verified)
        expect(error.message).toContain(`${dump} holds a schema the migrations do not make (`)
        for (const name of named) expect(error.message).toContain(name)
        expect(error.schema.differences).toHaveLength(named.length)

        // restore reads a dump with the same inspection as backup --verify.
        const restored = await cli(['restore', dump, '--json'], { databaseUrl: url, env: withTools })
        expect(restored.status).toBe(1)
        const refused = jsonOf(restored).error
        for (const name of named) expect(refused.message).toContain(name)
        expect(refused.message).toMatch(/nothing was done$/)
        expect(refused.commands).toBeUndefined()

        expect(await studentIds(storage)).toEqual([ADA, BEN])
        expect(await strayObjects(storage)).toEqual([])

        // The dump as pg_dump wrote it verifies, and restore gives the command that restores it.
        const sound = path.join(dir, 'sound.dump')
        const commands = await printedCommands(url, sound)
        expect((await paste(commands.backup)).status).toBe(0)

        // An archive edited by hand, which pg_dump never writes: an index's statement made to drop the disclosure log.
        const bytes = fs.readFileSync(sound)
        const index = `CREATE INDEX audit_log_at ON ${storage.schema}.audit_log USING btree (at);`
        const at = bytes.indexOf(index)
        expect(at).toBeGreaterThan(0)
        const edited = path.join(dir, 'edited.dump')
        fs.writeFileSync(edited, bytes)
        const handle = fs.openSync(edited, 'r+')
        fs.writeSync(handle, `DROP TABLE ${storage.schema}.disclosures;`.padEnd(index.length), at)
        fs.closeSync(handle)
        const editedCheck = await cli(['restore', edited], { databaseUrl: url, env: withTools })
        expect(editedCheck.status).toBe(1)
        expect(editedCheck.stderr).toContain('(changed INDEX audit_log_at)')
        expect(editedCheck.stderr).not.toContain('pg_restore --clean')
        const soundVerified = await cli(['backup', '--verify', sound, '--json'], { databaseUrl: url, env: withTools })
        expect(soundVerified.status, soundVerified.stderr).toBe(0)
        expect(jsonOf(soundVerified).schema).toMatchObject({ name: storage.schema, differences: [] })
        const text = await cli(['backup', '--verify', sound], { databaseUrl: url, env: withTools })
        expect(text.stdout).toContain('schema objects: exactly what those migrations make')
        const restore = await cli(['restore', sound, '--json'], { databaseUrl: url, env: withTools })
        expect(restore.status).toBe(1)
        expect(jsonOf(restore).error).toMatchObject({ commands, checked: { schema: { differences: [] } } })
        await upsertStudents(storage.db, [{ id: CLEO, firstName: 'Cleo', tier: 'explorer' }], Date.now())
        const restoredSound = await paste(commands.restore)
        expect(restoredSound.status, restoredSound.output).toBe(0)
        expect(await studentIds(storage)).toEqual([ADA, BEN])
        expect(await strayObjects(storage)).toEqual([])
      } finally {
        await storage.close()
      }
    }, 180_000)
  },
)

const DAY = 86_400_000

describe.skipIf(SKIPPED !== undefined)(
  `the certificate signing keys across pg_restore${SKIPPED ? ` (skipped: ${SKIPPED})` : ''}`,
  () => {
    it('restore names a key the dump lacks and gives the commands that keep it: the certificate it signed still verifies', async () => {
      const storage = await createTestStorage({ catalog: false, url: freshDatabaseUrl(POSTGRES_URL) })
      try {
        // An agreement of Acme's that ended 40 days ago, its 30 days of disposition over.
        const now = Date.now()
        const acme = await createOrganisation(storage.db, 'Acme Learning', now - 400 * DAY)
        await recordAgreement(
          storage.db,
          {
            organisationId: acme.id,
            signedAt: now - 400 * DAY,
            expiresAt: null,
            documentRef: 'DSA-7',
            purpose: 'Reading',
          },
          now - 400 * DAY,
        )
        await upsertStudents(storage.db, [{ id: ADA, firstName: 'Ada', tier: 'explorer' }], now - 300 * DAY)
        await linkStudents(storage.db, [{ studentId: ADA, organisationId: acme.id }], now - 300 * DAY)
        await endAgreements(storage.db, { organisationId: acme.id }, now - 40 * DAY)
        expect(await disposeDueAgreements(storage.db, now)).toHaveLength(1)
        const databaseUrl = new URL(POSTGRES_URL)
        databaseUrl.searchParams.set('schema', storage.schema!)
        const url = databaseUrl.toString()
        const dir = tempDir()

        // The dump is taken before the key exists; the certificate after.
        const dump = path.join(dir, 'before-the-key.dump')
        const commands = await printedCommands(url, dump)
        expect((await paste(commands.backup)).status).toBe(0)
        const out = path.join(dir, 'certificate.json')
        const issued = await cli(['agreement', 'certificate', '--org', 'Acme Learning', '--out', out], {
          databaseUrl: url,
        })
        expect(issued.status, issued.stderr).toBe(0)
        const certificate = JSON.parse(fs.readFileSync(out, 'utf8'))

        const restore = await cli(['restore', dump, '--json'], { databaseUrl: url, env: withTools })
        expect(restore.status).toBe(1)
        const { keepSettings } = jsonOf(restore).error
        expect(keepSettings?.keys).toEqual([certificate.signature.kid])
        const text = await cli(['restore', dump], { databaseUrl: url, env: withTools })
        expect(text.stderr).toContain(
          `The database has certificate signing keys the dump lacks (${certificate.signature.kid})`,
        )
        expect(text.stderr).toContain(keepSettings.before)
        expect(text.stderr).toContain(keepSettings.after)

        for (const step of [keepSettings.before, commands.restore, keepSettings.after]) {
          const done = await paste(step)
          expect(done.status, `${step}\n${done.output}`).toBe(0)
        }
        const keys = keySet(await loadSigningKey(storage.db), await earlierSigningKeys(storage.db)).keys
        expect(verifyCertificate(certificate, keys)).toBe(true)
      } finally {
        await storage.close()
      }
    }, 120_000)
  },
)

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
    // Creating and dropping a database each wait for a checkpoint, which the suite's other
    // PostgreSQL work can make longer than the service's 5 s statement timeout.
    const admin = openStorage(POSTGRES_URL, { timeoutMs: 60_000 })
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
      // Dropping waits for a checkpoint, which a loaded machine has made take over a minute: a
      // database left behind in the test cluster is untidy, not a failure of what was tested.
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db).catch(() => {})
      await admin.close()
    }
  }, 120_000)
})
